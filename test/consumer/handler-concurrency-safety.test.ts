import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { effectsTable, transportFactories, wire, type Effects, type TransportHandle } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const KEYS = 8;
const PER_KEY = 12;

// A batch's handlers at once in its transaction (handlerConcurrency): the properties that must survive it.
describe('handlerConcurrency 100: handlers at once, safely (PostgreSQL + RabbitMQ)', () => {
  let f: StoreFixture;
  let store: ConsumerStore;
  let t: TransportHandle;
  let effects: Effects;
  let group: string;
  let consumer: Consumer | undefined;

  beforeEach(async () => {
    f = await makePostgresFixture('handler_safe');
    store = f.store;
    t = await transportFactories.rabbitmq();
    effects = await effectsTable(f);
    group = uniqueName('fast');
    await t.prepare(group, 'order.#');
  });
  afterEach(async () => {
    await consumer?.stop();
    consumer = undefined;
    await t.close();
    await f.teardown();
  });

  /** Publishes every message before the consumer starts, so they arrive together, in batches. */
  const backlog = async (messages: { key: string; n: number; fail?: boolean }[]) => {
    const sent = [];
    for (const m of messages) {
      const message = wire({ type: 'order.created', orderingKey: m.key, payload: m });
      await t.publishRaw('order.created', message);
      sent.push(message);
    }
    return sent;
  };

  it("overlaps handlers of different ordering keys and runs each key's messages one at a time, in order", async () => {
    const messages = Array.from({ length: KEYS * PER_KEY }, (_, i) => ({ key: `k${i % KEYS}`, n: i }));
    await backlog(messages);
    let running = 0;
    let mostAtOnce = 0;
    const busyKeys = new Set<string>();
    const overlapsOfOneKey: string[] = [];
    const applied = new Map<string, number[]>();
    consumer = new Consumer({ group, store, transport: t.transport, logger: silentLogger, handlerConcurrency: 100 }).on(
      'order.created',
      async (p: { key: string; n: number }, { tx, envelope }) => {
        if (busyKeys.has(p.key)) overlapsOfOneKey.push(`${p.key}#${p.n}`);
        busyKeys.add(p.key);
        mostAtOnce = Math.max(mostAtOnce, ++running);
        try {
          await effects.insert(tx, envelope.id, group, `${p.key}:${p.n}`);
          // A second statement: another key's handler gets between this handler's statements.
          await tx.query('SELECT 1');
          applied.set(p.key, [...(applied.get(p.key) ?? []), p.n]);
        } finally {
          running--;
          busyKeys.delete(p.key);
        }
      },
    );
    await consumer.start();
    await waitFor('every message applied', async () => (await effects.rows()).length === messages.length);

    expect(mostAtOnce).toBeGreaterThan(1); // handlers did overlap
    expect(overlapsOfOneKey).toEqual([]);
    for (let k = 0; k < KEYS; k++) {
      const sent = messages.filter((m) => m.key === `k${k}`).map((m) => m.n);
      expect(applied.get(`k${k}`)).toEqual(sent);
    }
  });

  it("dead-letters a failing message of a batch and commits the others' effects, all acked", async () => {
    const messages = Array.from({ length: 40 }, (_, i) => ({ key: `k${i % KEYS}`, n: i, fail: i === 17 }));
    const sent = await backlog(messages);
    const failing = sent[17]!;
    let handlerRuns = 0;
    consumer = new Consumer({ group, store, transport: t.transport, logger: silentLogger, handlerConcurrency: 100 }).on(
      'order.created',
      async (p: { n: number; fail?: boolean }, { tx, envelope }) => {
        handlerRuns++;
        await effects.insert(tx, envelope.id, group, `n${p.n}`);
        if (p.fail) throw new Error('downstream refused it');
      },
    );
    await consumer.start();
    await waitFor(
      'the failure recorded',
      async () => (await store.deadLetters.getDeadLetter(failing.id, group)) !== undefined,
    );
    await waitFor('the others applied', async () => (await effects.rows()).length === messages.length - 1);
    await consumer.stop();
    consumer = undefined;

    const rows = await effects.rows();
    expect(rows.map((r) => r.message_id).sort()).toEqual(
      sent
        .filter((m) => m.id !== failing.id)
        .map((m) => m.id)
        .sort(),
    );
    expect(await store.deadLetters.getDeadLetter(failing.id, group)).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await store.inbox.inboxRecordedAt(failing.id, group)).toBeUndefined(); // its own insert rolled back
    for (const m of sent.filter((s) => s.id !== failing.id))
      expect(await store.inbox.inboxRecordedAt(m.id, group)).toBeDefined();
    expect(handlerRuns).toBeGreaterThanOrEqual(messages.length);

    // Everything was acked: with the subscription's channel closed, nothing came back to the queue.
    const conn = await amqp.connect(testEnv.amqpUrl);
    try {
      const ch = await conn.createChannel();
      expect((await ch.checkQueue(group)).messageCount).toBe(0);
    } finally {
      await conn.close();
    }
  });
});
