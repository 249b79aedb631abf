import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/core/errors.js';
import { parseEmbeddedOptions } from '../../src/transports/embedded/options.js';
import { createEmbeddedTransport, type EmbeddedTransportOptions } from '../../src/transports/embedded/index.js';
import { optionError as thrown } from '../support/option-error.js';

const optionError = (options: unknown) => thrown(() => parseEmbeddedOptions(options as EmbeddedTransportOptions));

describe('embedded transport options, parsed once like the core components', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'surety-embedded-options-'));
    path = join(dir, 'log.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fill defaults into a frozen object', () => {
    const config = parseEmbeddedOptions({ path });
    expect(Object.isFrozen(config)).toBe(true);
    expect(config).toMatchObject({
      path,
      tablePrefix: 'surety_log_',
      pollIntervalMs: 200,
      leaseTtlMs: 10_000,
      busyTimeoutMs: 5_000,
      synchronous: 'full',
      maxBatchSize: 1_000,
    });
  });

  it('say which option is wrong and what is allowed, with the core error class and code', () => {
    expect(optionError({ path, pollIntervalMs: 1 })).toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      option: 'pollIntervalMs',
      detail: 'must be an integer from 5 to 60000',
    });
    expect(optionError({ path, maxBatchSize: 2.5 }).detail).toBe('must be an integer from 1 to 100000');
    expect(optionError({ path, synchronous: 'off' })).toMatchObject({
      option: 'synchronous',
      detail: 'must be one of "full", "normal"',
    });
    expect(optionError({ path, pollIntervalMs: 1_000, leaseTtlMs: 2_000 })).toMatchObject({
      option: 'leaseTtlMs',
      detail: 'must be at least 3 x pollIntervalMs (3000)',
    });
    expect(optionError({ path, database: {} })).toMatchObject({ option: 'database' });
    expect(optionError({ path, clock: { now: 1 } })).toMatchObject({
      option: 'clock',
      detail: 'must have a now() method',
    });
    expect(optionError({ path, logger: console.log }).option).toBe('logger');
    expect(optionError('log.sqlite')).toMatchObject({ option: 'options', detail: 'must be an object' });
  });

  it('refuse bad subscribe and purge options, naming them', async () => {
    const transport = createEmbeddedTransport({ path, logger: null });
    try {
      const handle = async () => undefined;
      await expect(transport.subscribe({ group: 'g', topics: ['t', ''] }, handle)).rejects.toMatchObject({
        option: 'topics[1]',
        detail: 'must be a non-empty string',
      });
      await expect(transport.subscribe({ group: 'g', topics: ['t'], prefetch: 20_000 }, handle)).rejects.toMatchObject({
        option: 'prefetch',
        detail: 'must be an integer from 1 to 10000',
      });
      await expect(transport.purgeCommitted({ batchSize: 0 })).rejects.toBeInstanceOf(InvalidOptionError);
      await expect(transport.purgeCommitted({ batchSize: 0 })).rejects.toMatchObject({ option: 'batchSize' });
    } finally {
      await transport.close();
    }
  });
});
