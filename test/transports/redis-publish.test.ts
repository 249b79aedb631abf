import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedisStreamsTransport, type RedisStreamsTransport } from '../../src/transports/redis/index.js';
import type { RedisStreamsTransportOptions } from '../../src/transports/redis/options.js';
import { testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { deleteStreams, startCountingProxy } from './fixtures/redis-admin.js';

describe('redis publishing', () => {
  let prefix: string;
  let admin: Redis;
  let opened: RedisStreamsTransport[];

  const open = async (extra: Partial<RedisStreamsTransportOptions> = {}): Promise<RedisStreamsTransport> => {
    const transport = await createRedisStreamsTransport({ url: testEnv.redisUrl, prefix, logger: null, ...extra });
    opened.push(transport);
    if (!(await transport.waitUntilReady(10_000))) throw new Error('Redis transport not ready');
    return transport;
  };

  beforeEach(() => {
    prefix = `${uniqueName('publish')}:`;
    admin = new Redis(testEnv.redisUrl);
    opened = [];
  });

  afterEach(async () => {
    await Promise.all(opened.map((t) => t.close()));
    await deleteStreams(admin, prefix);
    admin.disconnect();
  });

  it('writes the id, the headers as JSON and the body byte for byte into one entry', async () => {
    const transport = await open();
    const message = testMessage('fields');
    await transport.publish({ topic: 'order.created', message });
    const entries = (await admin.xrangeBuffer(`${prefix}order.created`, '-', '+')) as [Buffer, Buffer[]][];
    expect(entries).toHaveLength(1);
    const fields = entries[0]![1];
    expect(fields.map((f, i) => (i % 2 === 0 ? f.toString() : null)).filter(Boolean)).toEqual(['id', 'h', 'b']);
    expect(fields[1]!.toString()).toBe(message.id);
    expect(JSON.parse(fields[3]!.toString())).toEqual(message.headers);
    expect(fields[5]!.equals(message.body)).toBe(true);
  });

  it('maps topics to streams with streamForTopic', async () => {
    const transport = await open({ streamForTopic: (topic) => `${prefix}all-${topic.split('.')[0]}` });
    await transport.publish({ topic: 'order.created', message: testMessage('a') });
    await transport.publish({ topic: 'order.paid', message: testMessage('b') });
    expect(transport.streamOf('order.paid')).toBe(`${prefix}all-order`);
    expect(await admin.xlen(`${prefix}all-order`)).toBe(2);
  });

  it('sends publishes of one turn in one pipeline: 1,000 publishes arrive in a handful of writes', async () => {
    const proxy = await startCountingProxy(new URL(testEnv.redisUrl));
    try {
      const transport = await open({ url: proxy.url });
      const before = proxy.chunks();
      const messages = Array.from({ length: 1_000 }, (_, i) => testMessage(`m${i}`));
      await Promise.all(messages.map((message) => transport.publish({ topic: 't', message })));
      expect(proxy.chunks() - before).toBeLessThan(50);
      expect(await admin.xlen(`${prefix}t`)).toBe(1_000);
    } finally {
      await proxy.close();
    }
  });

  it('trims by length (MAXLEN ~) on every XADD', async () => {
    const transport = await open({ maxLen: 10 });
    const messages = Array.from({ length: 1_000 }, (_, i) => testMessage(`m${i}`));
    await Promise.all(messages.map((message) => transport.publish({ topic: 't', message })));
    const length = await admin.xlen(`${prefix}t`);
    // Approximate trimming removes whole macro nodes (100 entries by default), never more than asked.
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThan(300);
  });

  it('trims by age (MINID ~), dropping whole nodes of entries older than maxAgeMs', async () => {
    const stream = `${prefix}t`;
    const hourAgo = Date.now() - 3_600_000;
    const old = admin.pipeline();
    for (let i = 0; i < 300; i++) old.xadd(stream, `${hourAgo + i}-0`, 'id', `old${i}`);
    await old.exec();
    const transport = await open({ maxAgeMs: 60_000 });
    await transport.publish({ topic: 't', message: testMessage('new') });
    const ids = (await admin.xrange(stream, '-', '+')).map(([id]) => Number(id.split('-')[0]));
    // Approximate trimming keeps the old entries sharing a macro node (100 by default) with newer ones.
    expect(ids.filter((ms) => ms < hourAgo + 300).length).toBeLessThan(100);
    expect(ids.filter((ms) => ms > Date.now() - 60_000)).toHaveLength(1);
  });

  it('fails a publish with SURETY_PUBLISH_NACKED when fewer replicas than waitReplicas acknowledged it', async () => {
    const transport = await open({ waitReplicas: { count: 1, timeoutMs: 50 } });
    const attempt = transport.publish({ topic: 't', message: testMessage('unreplicated') });
    await expect(attempt).rejects.toMatchObject({ code: 'SURETY_PUBLISH_NACKED' });
    await expect(attempt).rejects.toThrow('only 0 of 1 replicas acknowledged');
  });

  it('refuses one publish the server rejects (WRONGTYPE) with SURETY_PUBLISH_REFUSED; the batch beside it goes through', async () => {
    const transport = await open();
    await admin.set(`${prefix}not-a-stream`, 'x');
    const refused = transport.publish({ topic: 'not-a-stream', message: testMessage('refused') });
    const fine = transport.publish({ topic: 't', message: testMessage('fine') });
    await expect(refused).rejects.toMatchObject({ code: 'SURETY_PUBLISH_REFUSED' });
    await expect(refused).rejects.toThrow('WRONGTYPE');
    await expect(fine).resolves.toBeUndefined();
    expect(await admin.xlen(`${prefix}t`)).toBe(1);
  });

  it('rejects at once, never buffers, while it has no connection; not ready, and waitUntilReady times out', async () => {
    const nobody = createServer();
    await new Promise<void>((resolve) => nobody.listen(0, '127.0.0.1', resolve));
    const { port } = nobody.address() as AddressInfo;
    await new Promise<void>((resolve) => nobody.close(() => resolve())); // a port nothing listens on
    const transport = await createRedisStreamsTransport({ url: `redis://127.0.0.1:${port}`, logger: null });
    opened.push(transport);
    expect(transport.isReady()).toBe(false);
    expect(await transport.waitUntilReady(200)).toBe(false);
    const attempt = transport.publish({ topic: 't', message: testMessage('nowhere') });
    await expect(attempt).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
    await expect(attempt).rejects.toThrow(`redis://127.0.0.1:${port}`);
  });
});
