import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { testEnv } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';

type Fixture = Awaited<ReturnType<typeof makePostgresFixture>>;

/** A LISTEN on the store's channel in its own connection: the payloads, in the order delivered. */
async function listenTo(f: Fixture) {
  const client = new pg.Client({ connectionString: testEnv.postgresUrl });
  await client.connect();
  const heard: string[] = [];
  let waiting: { payload: string; resolve: () => void } | undefined;
  client.on('notification', (msg) => {
    heard.push(msg.payload ?? '');
    if (waiting && msg.payload === waiting.payload) waiting.resolve();
  });
  await client.query(`LISTEN "${f.store.notifyChannel}"`);
  return {
    heard,
    /** Resolves when `payload` has been heard (now or later). */
    until: (payload: string) =>
      heard.includes(payload) ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { payload, resolve })),
    /** NOTIFY `payload` from another connection: it is delivered after every notification committed before it. */
    mark: (payload: string) => f.pool.query('SELECT pg_notify($1, $2)', [f.store.notifyChannel, payload]),
    close: () => client.end(),
  };
}

describe('PostgreSQL commit notifications', () => {
  let f: Fixture;
  let listener: Awaited<ReturnType<typeof listenTo>>;
  beforeEach(async () => {
    f = await makePostgresFixture('notify');
    listener = await listenTo(f);
  });
  afterEach(async () => {
    await listener.close();
    await f.teardown();
  });

  it('in your own transaction: the insert notifies at commit, by default', async () => {
    const outbox = new Outbox({ store: f.store });
    const t = await f.begin();
    await outbox.add(t.tx, { type: 'order.created', payload: {} });
    await t.commit();
    await listener.mark('after');
    await listener.until('after');
    expect(listener.heard).toEqual(['', 'after']); // delivered in commit order: the insert's came first
  });

  it('with notifyAfterCommit: nothing at commit, one notification when you call committed()', async () => {
    const outbox = new Outbox({ store: f.store, notifyAfterCommit: true });
    const t = await f.begin();
    await outbox.add(t.tx, { type: 'order.created', payload: {} });
    await t.commit();
    await listener.mark('after-commit');
    await listener.until('after-commit');
    outbox.committed();
    await listener.mark('after-committed');
    await listener.until('after-committed');
    // committed() does not wait for its NOTIFY: it came before or after the second mark.
    expect(listener.heard.slice(0, 1)).toEqual(['after-commit']);
    expect(listener.heard.filter((p) => p === '').length).toBe(1);
  });

  it('outbox.transaction notifies after its commit, folding concurrent commits into fewer notifications', async () => {
    const outbox = new Outbox({ store: f.store });
    await Promise.all(
      Array.from({ length: 20 }, () =>
        outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} })),
      ),
    );
    await f.store.outbox.notificationsSent(); // the last NOTIFY may still be in flight
    await listener.mark('after');
    await listener.until('after');
    const notifications = listener.heard.filter((p) => p === '').length;
    expect(notifications).toBeGreaterThanOrEqual(1);
    expect(notifications).toBeLessThanOrEqual(20);
    expect(await f.store.outbox.stats()).toMatchObject({ pending: 20 });
  });
});

describe('a relay woken only by NOTIFY', () => {
  it('publishes at once what outbox.transaction and committed() announce, with a poll interval of a minute', async () => {
    const f = await makePostgresFixture('notify_relay');
    const probe = await RabbitProbe.open('notify_relay');
    const transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
    const relay = new OutboxRelay({
      store: f.store,
      publisher: transport,
      logger: silentLogger,
      retention: false,
      pollIntervalMs: 60_000,
    });
    try {
      const queue = await probe.bindQueue('#');
      await relay.start();
      // Only a NOTIFY can wake the relay now: its next poll is a minute away.
      const producer = new Outbox({ store: f.store, notifyAfterCommit: true });
      const a = await producer.transaction((tx) => producer.add(tx, { type: 'order.created', payload: {} }));
      expect(await probe.collect(queue, 1)).toEqual([a.messageId]);
      const t = await f.begin();
      const b = await producer.add(t.tx, { type: 'order.paid', payload: {} });
      await t.commit();
      producer.committed();
      expect(await probe.collect(queue, 1)).toEqual([b.messageId]);
    } finally {
      await relay.stop();
      await transport.close();
      await probe.close();
      await f.teardown();
    }
  });
});
