/**
 * With --json, a failed command says so as one JSON line on stderr, `{"error":{"code","message"}}`,
 * with the exit code it would have anyway; stdout stays empty. And `surety --version`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFixtures, cliRunner, runCli, type CliFixture } from './cli-harness.js';

describe('surety --json errors and --version (PostgreSQL)', () => {
  let f: CliFixture;
  const { run } = cliRunner(() => f.dbArgs);

  beforeAll(async () => {
    f = await cliFixtures.postgres();
  });
  afterAll(() => f?.teardown());

  it.each([
    [['dlq', 'show', '999', '--json'], 1, 'SURETY_NOT_FOUND', 'dead letter 999 not found'],
    [
      ['outbox', 'list', '--limit', '0', '--json'],
      2,
      'SURETY_INVALID_OPTION',
      '--limit must be an integer from 1 to 500 (got "0")',
    ],
    [['audit', '--action', 'bogus', '--json'], 2, 'SURETY_INVALID_OPTION', /^--action: must be one of dlq\.replay, /],
    [['dlq', 'list', '--bogus', '--json'], 2, 'SURETY_INVALID_OPTION', "unknown option '--bogus'"],
    [['outbox', 'show', 'nope', '--json'], 2, 'SURETY_INVALID_OPTION', /^<messageId> must be a message id/],
  ] as const)('%j: exit %i, %s as JSON on stderr', async (args, exit, code, message) => {
    const res = await run(...args);
    expect(res.code, res.err).toBe(exit);
    expect(res.out).toBe('');
    expect(res.err.endsWith('\n') && res.err.split('\n').length).toBe(2); // one line
    const body = JSON.parse(res.err);
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error)).toEqual(['code', 'message']);
    expect(body.error.code).toBe(code);
    if (typeof message === 'string') expect(body.error.message).toBe(message);
    else expect(body.error.message).toMatch(message);
  });

  it('a database that does not answer: SURETY_STORE_FAILED as JSON, exit 1', async () => {
    const res = await runCli(['dlq', 'list', '--json', '--database', 'postgres://postgres@127.0.0.1:1/none']);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.err)).toEqual({
      error: { code: 'SURETY_STORE_FAILED', message: expect.stringMatching(/^PostgreSQL: connect ECONNREFUSED/) },
    });
  });

  it('without --json, the same error stays a line of text', async () => {
    expect(await run('dlq', 'show', '999')).toMatchObject({
      code: 1,
      err: 'surety: SURETY_NOT_FOUND: dead letter 999 not found\n',
    });
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-V']) {
      expect(await runCli([flag])).toEqual({ code: 0, out: `${version}\n`, err: '' });
    }
  });
});
