import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createRedisStreamsTransport } from '../../src/transports/redis/index.js';
import { testMessage } from '../conformance/transport-suite.js';
import { testEnv } from '../support/env.js';
import { startCountingProxy } from './fixtures/redis-admin.js';
import { useRedisTestbed } from './fixtures/redis-testbed.js';

describe('redis publishing', () => {
  const bed = useRedisTestbed('publish');

  it('writes the id, the headers as JSON and the body byte for byte into one entry', async () => {
    const transport = await bed.open();
    const message = testMessage('fields');
    await transport.publish({ topic: 'order.created', message });
    const entries = (await bed.admin.xrangeBuffer(`${bed.prefix}order.created`, '-', '+')) as [Buffer, Buffer[]][];
    expect(entries).toHaveLength(1);
    const fields = entries[0]![1];
    expect(fields.map((f, i) => (i % 2 === 0 ? f.toString() : null)).filter(Boolean)).toEqual(['id', 'h', 'b']);
    expect(fields[1]!.toString()).toBe(message.id);
    expect(JSON.parse(fields[3]!.toString())).toEqual(message.headers);
    expect(fields[5]!.equals(message.body)).toBe(true);
  });

  it('maps topics to streams with streamForTopic', async () => {
    const transport = await bed.open({ streamForTopic: (topic) => `${bed.prefix}all-${topic.split('.')[0]}` });
    await transport.publish({ topic: 'order.created', message: testMessage('a') });
    await transport.publish({ topic: 'order.paid', message: testMessage('b') });
    expect(transport.streamOf('order.paid')).toBe(`${bed.prefix}all-order`);
    expect(await bed.admin.xlen(`${bed.prefix}all-order`)).toBe(2);
  });

  it('sends publishes of one turn in one pipeline: 1,000 publishes arrive in a handful of writes', async () => {
    const proxy = await startCountingProxy(new URL(testEnv.redisUrl));
    try {
      const transport = await bed.open({ url: proxy.url });
      const before = proxy.chunks();
      const messages = Array.from({ length: 1_000 }, (_, i) => testMessage(`m${i}`));
      await Promise.all(messages.map((message) => transport.publish({ topic: 't', message })));
      expect(proxy.chunks() - before).toBeLessThan(50);
      expect(await bed.admin.xlen(`${bed.prefix}t`)).toBe(1_000);
    } finally {
      await proxy.close();
    }
  });

  it('trims by length (MAXLEN ~) on every XADD', async () => {
    const transport = await bed.open({ maxLen: 10 });
    const messages = Array.from({ length: 1_000 }, (_, i) => testMessage(`m${i}`));
    await Promise.all(messages.map((message) => transport.publish({ topic: 't', message })));
    const length = await bed.admin.xlen(`${bed.prefix}t`);
    // Approximate trimming removes whole macro nodes (100 entries by default), never more than asked.
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThan(300);
  });

  it('trims by age (MINID ~), dropping whole nodes of entries older than maxAgeMs', async () => {
    const stream = `${bed.prefix}t`;
    const hourAgo = Date.now() - 3_600_000;
    const old = bed.admin.pipeline();
    for (let i = 0; i < 300; i++) old.xadd(stream, `${hourAgo + i}-0`, 'id', `old${i}`);
    await old.exec();
    const transport = await bed.open({ maxAgeMs: 60_000 });
    await transport.publish({ topic: 't', message: testMessage('new') });
    const ids = (await bed.admin.xrange(stream, '-', '+')).map(([id]) => Number(id.split('-')[0]));
    // Approximate trimming keeps the old entries sharing a macro node (100 by default) with newer ones.
    expect(ids.filter((ms) => ms < hourAgo + 300).length).toBeLessThan(100);
    expect(ids.filter((ms) => ms > Date.now() - 60_000)).toHaveLength(1);
  });

  it('fails a publish with SURETY_PUBLISH_NACKED when fewer replicas than waitReplicas acknowledged it', async () => {
    const transport = await bed.open({ waitReplicas: { count: 1, timeoutMs: 50 } });
    const attempt = transport.publish({ topic: 't', message: testMessage('unreplicated') });
    await expect(attempt).rejects.toMatchObject({ code: 'SURETY_PUBLISH_NACKED' });
    await expect(attempt).rejects.toThrow('only 0 of 1 replicas acknowledged');
  });

  it('refuses one publish the server rejects (WRONGTYPE) with SURETY_PUBLISH_REFUSED; the batch beside it goes through', async () => {
    const transport = await bed.open();
    await bed.admin.set(`${bed.prefix}not-a-stream`, 'x');
    const refused = transport.publish({ topic: 'not-a-stream', message: testMessage('refused') });
    const fine = transport.publish({ topic: 't', message: testMessage('fine') });
    await expect(refused).rejects.toMatchObject({ code: 'SURETY_PUBLISH_REFUSED' });
    await expect(refused).rejects.toThrow('WRONGTYPE');
    await expect(fine).resolves.toBeUndefined();
    expect(await bed.admin.xlen(`${bed.prefix}t`)).toBe(1);
  });

  it('rejects publishes at once, never buffers, while it has no connection; subscribe gives up after startTimeoutMs', async () => {
    const nobody = createServer();
    await new Promise<void>((resolve) => nobody.listen(0, '127.0.0.1', resolve));
    const { port } = nobody.address() as AddressInfo;
    await new Promise<void>((resolve) => nobody.close(() => resolve())); // a port nothing listens on
    const url = `redis://127.0.0.1:${port}`;
    const transport = await createRedisStreamsTransport({ url, startTimeoutMs: 200, logger: null });
    try {
      expect(transport.isReady()).toBe(false);
      expect(await transport.waitUntilReady(200)).toBe(false);
      const attempt = transport.publish({ topic: 't', message: testMessage('nowhere') });
      await expect(attempt).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
      await expect(attempt).rejects.toThrow(url);
      // subscribe waits up to startTimeoutMs for a connection, then says where it could not connect.
      const subscribing = transport.subscribe({ group: 'g', topics: ['t'] }, async () => {});
      await expect(subscribing).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
      await expect(subscribing).rejects.toThrow(`could not subscribe to surety:t: no connection to Redis at ${url}`);
    } finally {
      await transport.close();
    }
  });
});
