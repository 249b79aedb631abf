import { describe, expect, it } from 'vitest';
import { createRedisStreamProbe, createRedisStreamsTransport } from '../../src/transports/redis/index.js';
import { loadIoredis, type RedisDriver } from '../../src/transports/redis/driver.js';
import { resolveOptions, type RedisStreamsTransportOptions } from '../../src/transports/redis/options.js';
import { testEnv, uniqueName } from '../support/env.js';
import { optionError as thrown } from '../support/option-error.js';

const url = 'redis://127.0.0.1:6379';
const optionError = (options: unknown) => thrown(() => resolveOptions(options as RedisStreamsTransportOptions));

describe('redis options, parsed once like the core components', () => {
  it('say which option is wrong and what is allowed', () => {
    expect(optionError({})).toMatchObject({ code: 'SURETY_INVALID_OPTION', option: 'url' });
    expect(optionError({ url: 'http://localhost:6379' })).toMatchObject({
      option: 'url',
      detail: 'must be a redis:// or rediss:// URL',
    });
    expect(optionError({ url, prefetch: 0 })).toMatchObject({
      option: 'prefetch',
      detail: 'must be an integer from 1 to 100000',
    });
    expect(optionError({ url, claimIdleMs: '30s' })).toMatchObject({ option: 'claimIdleMs' });
    expect(optionError({ url, groupStart: 'latest' })).toMatchObject({
      option: 'groupStart',
      detail: 'must be one of "0", "$"',
    });
    expect(optionError({ url, maxDeliveries: 0 }).option).toBe('maxDeliveries');
    expect(optionError({ url, waitReplicas: { count: 1 } }).option).toBe('waitReplicas.timeoutMs');
    expect(optionError({ url, waitReplicas: 1 })).toMatchObject({
      option: 'waitReplicas',
      detail: 'must be an object with "count" and "timeoutMs"',
    });
    expect(optionError({ url, streamForTopic: 'orders' })).toMatchObject({
      option: 'streamForTopic',
      detail: 'must be a function',
    });
    expect(optionError({ url, connectionName: 'has space' }).option).toBe('connectionName');
    expect(optionError({ url, reconnect: { initialMs: 0 } }).option).toBe('reconnect.initialMs');
  });

  it('refuse trimming by length and by age at once', () => {
    expect(optionError({ url, maxLen: 1_000, maxAgeMs: 60_000 })).toMatchObject({
      option: 'maxAgeMs',
      detail: 'must not be set together with maxLen: a stream is trimmed by length or by age',
    });
  });

  it('resolve defaults into a frozen object: prefixed streams, a per-process consumer name, nothing trimmed', () => {
    const o = resolveOptions({ url });
    expect(Object.isFrozen(o)).toBe(true);
    expect(o.streamForTopic('order.created')).toBe('surety:order.created');
    expect(o.consumerName).toMatch(new RegExp(`-${process.pid}-[0-9a-f]{6}$`));
    expect(resolveOptions({ url }).consumerName).not.toBe(o.consumerName);
    expect(o).toMatchObject({ groupStart: '0', prefetch: 100, claimIdleMs: 30_000, claimIntervalMs: 10_000 });
    expect(o.maxDeliveries).toBe(20);
    expect(o.trim).toBeUndefined();
    expect(resolveOptions({ url, maxLen: 500 }).trim).toEqual(['MAXLEN', 500]);
    expect(resolveOptions({ url, maxDeliveries: null }).maxDeliveries).toBeNull();
  });

  it('are checked before any connection is made, and bad subscribe options name themselves', async () => {
    await expect(createRedisStreamsTransport({ url, blockMs: -1 })).rejects.toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      option: 'blockMs',
    });
    const transport = await createRedisStreamsTransport({ url: testEnv.redisUrl, logger: null });
    try {
      await expect(transport.subscribe({ group: '', topics: ['t'] }, async () => {})).rejects.toMatchObject({
        option: 'group',
      });
      await expect(transport.subscribe({ group: 'g', topics: [] }, async () => {})).rejects.toMatchObject({
        option: 'topics',
        detail: 'must be a non-empty list of topics',
      });
    } finally {
      await transport.close();
    }
  });

  it('of the probe name themselves too', () => {
    expect(thrown(() => createRedisStreamProbe({ url, maxLen: 0 }))).toMatchObject({ option: 'maxLen' });
    expect(thrown(() => createRedisStreamProbe({ url: uniqueName('x') }))).toMatchObject({ option: 'url' });
  });

  it('without ioredis installed, fail with SURETY_DRIVER_MISSING naming the package to install', async () => {
    const missing = Object.assign(new Error("Cannot find package 'ioredis'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadIoredis(() => Promise.reject(missing))).rejects.toMatchObject({
      code: 'SURETY_DRIVER_MISSING',
      message: 'the optional dependency "ioredis" is not installed: npm install ioredis',
    });
    const other = new Error('boom');
    await expect(loadIoredis(() => Promise.reject(other))).rejects.toBe(other);
    await expect(loadIoredis()).resolves.toHaveProperty('Redis');
    expect(typeof ((await loadIoredis()) satisfies RedisDriver).Redis).toBe('function');
  });
});
