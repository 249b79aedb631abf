import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { createNatsTransport, type NatsTransport, type NatsTransportOptions } from '../../src/transports/nats/index.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { NatsAdmin } from './fixtures/nats-admin.js';
import { NatsProxy } from './fixtures/nats-proxy.js';

describe('NATS JetStream publishing', () => {
  let admin: NatsAdmin;
  let topic: string;
  let proxy: NatsProxy;
  const transports: NatsTransport[] = [];

  const open = async (options: Partial<NatsTransportOptions> = {}): Promise<NatsTransport> => {
    const t = await createNatsTransport({ url: testEnv.natsUrl, logger: null, reconnectWaitMs: 50, ...options });
    transports.push(t);
    expect(await t.waitUntilReady(10_000)).toBe(true);
    return t;
  };
  const storedCount = async (): Promise<number> => (await admin.jsm.streams.info(topic)).state.messages;

  beforeEach(async () => {
    admin = await NatsAdmin.open();
    topic = uniqueName('publish');
    await admin.stream(topic, [topic], { duplicateWindowMs: 60_000 });
    proxy = await NatsProxy.start(testEnv.natsUrl);
  });
  afterEach(async () => {
    for (const t of transports.splice(0)) await t.close();
    await proxy.close();
    await admin.close();
  });

  it('resolves a resend inside the duplicate window, and the stream holds the message once', async () => {
    const t = await open();
    const sent = testMessage('twice');
    await t.publish({ topic, message: sent });
    await expect(t.publish({ topic, message: sent })).resolves.toBeUndefined(); // a duplicate PubAck
    await expect(open().then((other) => other.publish({ topic, message: sent }))).resolves.toBeUndefined();
    expect(await storedCount()).toBe(1);

    const log = new DeliveryLog();
    await t.subscribe({ group: 'g1', topics: [topic] }, log.handler);
    const marker = testMessage('marker');
    await t.publish({ topic, message: marker });
    await log.until('the marker', (l) => l.countOf(marker.id) === 1);
    expect(log.ids()).toEqual([sent.id, marker.id]);
  });

  it('maps topics to subjects with subjectPrefix', async () => {
    const prefix = uniqueName('prefix');
    await admin.stream(prefix, [`${prefix}.>`]);
    const t = await open({ subjectPrefix: prefix });
    const log = new DeliveryLog();
    await t.subscribe({ group: 'g1', topics: ['order.created'] }, log.handler);
    const sent = testMessage('prefixed');
    await t.publish({ topic: 'order.created', message: sent });
    await log.until('the message', (l) => l.deliveries.length === 1);
    expect(log.deliveries[0]!.topic).toBe('order.created');
    const stored = await admin.jsm.streams.getMessage(prefix, { seq: 1 });
    expect(stored?.subject).toBe(`${prefix}.order.created`);
  });

  it('rejects with SURETY_PUBLISH_TIMEOUT when no PubAck comes back', async () => {
    const t = await open({ url: proxy.url, publishTimeoutMs: 500 });
    proxy.holdServerToClient();
    const attempt = t.publish({ topic, message: testMessage('held') });
    await expect(attempt).rejects.toBeInstanceOf(PublishError);
    await expect(attempt).rejects.toMatchObject({ code: 'SURETY_PUBLISH_TIMEOUT' });
  });

  it('refuses a header value NATS cannot carry, naming the message', async () => {
    const t = await open();
    const bad = { ...testMessage('bad'), headers: { 'x-bad': 'two\nlines' } };
    await expect(t.publish({ topic, message: bad })).rejects.toMatchObject({
      code: 'SURETY_PUBLISH_REFUSED',
      message: expect.stringContaining(bad.id),
    });
  });

  it('settles publishes in flight truthfully when the connection is cut, then publishes and consumes again', async () => {
    const t = await open({ url: proxy.url });
    const log = new DeliveryLog();
    await t.subscribe({ group: 'g1', topics: [topic] }, log.handler);
    const messages = Array.from({ length: 3_000 }, (_, i) => testMessage(`m${i}`));
    const outcomes = messages.map((message) =>
      t.publish({ topic, message }).then(
        () => 'published',
        (err: PublishError) => err.code,
      ),
    );
    await outcomes[0]; // some are confirmed, most in flight
    proxy.cutAll();
    const settled = await Promise.all(outcomes);
    expect(new Set(settled)).toContain('published');
    for (const outcome of settled) expect(['published', 'SURETY_CONNECTION_LOST']).toContain(outcome);
    expect(settled.some((o) => o === 'SURETY_CONNECTION_LOST')).toBe(true);

    // Every confirmed one is stored; the rest go again after the reconnect, deduplicated by id.
    expect(await t.waitUntilReady(10_000)).toBe(true);
    const again = messages.filter((_, i) => settled[i] !== 'published');
    await Promise.all(again.map((message) => t.publish({ topic, message })));
    expect(await storedCount()).toBe(messages.length);
    await log.until('every message, through the new connection', (l) => l.uniqueIds().size === messages.length);
    expect(proxy.connections).toBeGreaterThan(0);
  });

  it('fails fast while disconnected instead of buffering', async () => {
    const t = await open({ url: proxy.url });
    await proxy.close();
    await waitFor('the transport to notice', () => !t.isReady());
    const started = Date.now();
    await expect(t.publish({ topic, message: testMessage('offline') })).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
