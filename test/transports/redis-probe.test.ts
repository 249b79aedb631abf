import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { brokerChecks } from '../../src/admin/doctor/broker-checks.js';
import { resolveThresholds } from '../../src/admin/doctor/thresholds.js';
import type { BrokerProbe } from '../../src/ports/broker-probe.js';
import { createRedisStreamProbe, redisQueueName } from '../../src/transports/redis/index.js';
import { testEnv, uniqueName } from '../support/env.js';
import { deleteStreams } from './fixtures/redis-admin.js';

describe('redis stream probe (read-only, for the doctor)', () => {
  let prefix: string;
  let stream: string;
  let admin: Redis;
  let probes: BrokerProbe[];

  const probe = (extra: { maxLen?: number; maxAgeMs?: number } = {}): BrokerProbe => {
    const p = createRedisStreamProbe({ url: testEnv.redisUrl, prefix, ...extra });
    probes.push(p);
    return p;
  };

  /** `count` entries in `stream`; the group `billing` reads `read` of them as consumer `c1`, leaving them pending. */
  const seed = async (count: number, read: number): Promise<void> => {
    await admin.xgroup('CREATE', stream, 'billing', '0', 'MKSTREAM');
    for (let i = 0; i < count; i++) await admin.xadd(stream, '*', 'id', `m${i}`, 'h', '{}', 'b', '{}');
    if (read > 0) await admin.xreadgroup('GROUP', 'billing', 'c1', 'COUNT', read, 'STREAMS', stream, '>');
  };

  beforeEach(() => {
    prefix = `${uniqueName('probe')}:`;
    stream = `${prefix}order.created`;
    admin = new Redis(testEnv.redisUrl);
    probes = [];
  });

  afterEach(async () => {
    await Promise.all(probes.map((p) => p.close()));
    await deleteStreams(admin, prefix);
    admin.disconnect();
  });

  it("reports a group's lag as ready, its pending entries as unacked, and the consumers that read lately", async () => {
    await seed(5, 2);
    await admin.xgroup('CREATECONSUMER', stream, 'billing', 'idle-for-ever');
    const state = await probe({ maxLen: 1_000_000 }).inspect(redisQueueName(stream, 'billing'));
    expect(state).toMatchObject({
      name: `${stream}@billing`,
      exists: true,
      ready: 3,
      unacked: 2,
      consumers: 2, // both tried within consumerIdleMs (created just now)
      type: 'stream',
      durable: false, // the test server runs with appendonly no
      source: 'redis',
      warnings: [],
    });
    expect(state.arguments).toMatchObject({ length: 5, lag: 3, 'entries-read': 2, 'consumers-registered': 2 });
  });

  it('does not count consumers idle longer than consumerIdleMs', async () => {
    await seed(1, 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const p = createRedisStreamProbe({ url: testEnv.redisUrl, consumerIdleMs: 50 });
    probes.push(p);
    expect(await p.inspect(`${stream}@billing`)).toMatchObject({ consumers: 0, unacked: 1 });
  });

  it('says a stream or a group that is not there does not exist', async () => {
    await seed(1, 0);
    const p = probe();
    expect(await p.inspect(`${prefix}nothing@billing`)).toMatchObject({ exists: false, ready: 0, source: 'redis' });
    expect(await p.inspect(`${stream}@shipping`)).toMatchObject({ exists: false });
  });

  it('lists the groups of the streams under its prefix', async () => {
    await seed(1, 0);
    await admin.xgroup('CREATE', stream, 'shipping', '$');
    await admin.set(`${prefix}not-a-stream`, 'x');
    expect(await probe().listQueues!()).toEqual([`${stream}@billing`, `${stream}@shipping`]);
  });

  it('warns when the stream is at its maxLen while the group has pending entries or lag', async () => {
    await seed(10, 1);
    const [warning] = (await probe({ maxLen: 10 }).inspect(`${stream}@billing`)).warnings!;
    expect(warning).toContain('at its maxLen of 10');
    expect(warning).toContain('1 pending and 9 unread');
    expect((await probe({ maxLen: 100 }).inspect(`${stream}@billing`)).warnings).toEqual([]);
  });

  it('warns when entries the group had not acked, or not read, were trimmed', async () => {
    await seed(10, 3);
    await admin.xtrim(stream, 'MAXLEN', 2);
    const warnings = (await probe().inspect(`${stream}@billing`)).warnings!;
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('were trimmed before they were acked');
    expect(warnings[1]).toContain('5 entries were trimmed before the group read them');
  });

  it('warns when the oldest unacked entry nears maxAgeMs', async () => {
    await admin.xgroup('CREATE', stream, 'billing', '0', 'MKSTREAM');
    await admin.xadd(stream, `${Date.now() - 50_000}-0`, 'id', 'old');
    await admin.xreadgroup('GROUP', 'billing', 'c1', 'COUNT', 1, 'STREAMS', stream, '>');
    expect((await probe({ maxAgeMs: 52_000 }).inspect(`${stream}@billing`)).warnings![0]).toContain(
      'near the maxAgeMs of 52000 ms',
    );
    expect((await probe({ maxAgeMs: 600_000 }).inspect(`${stream}@billing`)).warnings).toEqual([]);
  });

  it('gives the doctor its warnings as broker.queue-risk checks', async () => {
    await seed(10, 1);
    const checks = await brokerChecks(
      probe({ maxLen: 10 }),
      [`${stream}@billing`],
      { persistentPublishing: true, retryStrategy: 'dead-letter-table' },
      resolveThresholds(undefined),
    );
    const risk = checks.find((c) => c.id === 'broker.queue-risk');
    expect(risk).toMatchObject({ level: 'warn', place: 'broker' });
    expect(risk!.message).toContain('at its maxLen of 10');
    expect(checks.find((c) => c.id === 'broker.durability')).toMatchObject({ level: 'warn' });
  });

  it('rejects when Redis cannot be reached', async () => {
    const p = createRedisStreamProbe({ url: 'redis://127.0.0.1:1', timeoutMs: 200 });
    probes.push(p);
    await expect(p.inspect('x@y')).rejects.toThrow();
  });
});
