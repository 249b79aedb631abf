/**
 * A NUL (U+0000) in a filter flag or a config value is a usage error naming the flag or key (exit 2),
 * never a store failure: PostgreSQL text cannot hold one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/config/config-error.js';
import { cliFixtures, cliRunner, configFolder, seed, type CliFixture } from './cli-harness.js';

describe('a NUL in CLI input (PostgreSQL)', () => {
  let f: CliFixture;
  const { run } = cliRunner(() => f.dbArgs);
  const folder = configFolder('surety-nul-');

  beforeAll(async () => {
    f = await cliFixtures.postgres();
    await seed(f.store);
  });
  afterAll(() => f?.teardown());

  it.each([
    [['outbox', 'list', '--type', 'order\u0000'], '--type'],
    [['outbox', 'list', '--error', '\u0000'], '--error'],
    [['outbox', 'resend', '--all-matching', '--key', 'k\u0000'], '--key'],
    [['dlq', 'list', '--group', '\u0000'], '--group'],
    [['dlq', 'replay', '--all-matching', '--type', 'a\u0000b'], '--type'],
    [['audit', '--actor', 'cli:\u0000'], '--actor'],
  ])('%j is refused with exit 2 naming %s', async (args, flag) => {
    const res = await run(...args);
    expect({ code: res.code, err: res.err }).toEqual({
      code: 2,
      err: `surety: ${flag}: must not contain U+0000 (NUL)\n`,
    });
  });

  it('a config value holding a NUL names its key', async () => {
    const file = folder.file(
      'nul.json',
      JSON.stringify({
        database: { url: 'sqlite::memory:' },
        transport: { kind: 'embedded', path: 'log.db', queues: ['billing\u0000'] },
      }),
    );
    const err = await loadConfig({ file, env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe('config error at transport.queues[0]: must not contain U+0000 (NUL)');
  });
});
