import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { effectsTable, transportFactories, wire, type TransportHandle } from '../support/consumer-env.js';
import { waitFor } from '../support/wait.js';

describe('consumer parallelism (embedded log + PostgreSQL)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let t: TransportHandle;
  beforeEach(async () => {
    f = await makePostgresFixture('parallel');
    t = await transportFactories.embedded();
  });
  afterEach(async () => {
    await t.close();
    await f.teardown();
  });

  it('runs lanes side by side, keeps each key in order, and has every effect once', async () => {
    const effects = await effectsTable(f);
    const seen = new Map<string, number[]>();
    let inFlight = 0;
    let maxInFlight = 0;
    const consumer = new Consumer({
      group: 'ledger',
      store: f.store as unknown as ConsumerStore,
      transport: t.transport,
      logger: silentLogger,
      parallelism: 4,
      batchSize: 5,
    }).on('entry.posted', async (p: { n: number }, { tx, envelope }) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await effects.insert(tx, envelope.id, 'ledger', String(p.n));
      await new Promise((r) => setTimeout(r, 2)); // a handler that takes a little while
      seen.set(envelope.key, [...(seen.get(envelope.key) ?? []), p.n]);
      inFlight--;
    });
    await consumer.start();
    for (let n = 0; n < 200; n++) {
      await t.publishRaw('entry.posted', wire({ type: 'entry.posted', key: `acct-${n % 8}`, payload: { n } }));
    }
    await waitFor('all handled', async () => (await effects.rows()).length === 200);
    await consumer.stop();
    expect(maxInFlight).toBeGreaterThan(1);
    for (const ns of seen.values()) expect(ns).toEqual([...ns].sort((a, b) => a - b));
    expect(new Set((await effects.rows()).map((r) => r.message_id)).size).toBe(200);
  });

  it('keeps each ordering key in one lane, in order, when every message has a business key of its own', async () => {
    const effects = await effectsTable(f);
    const seen = new Map<string, number[]>();
    const consumer = new Consumer({
      group: 'ledger',
      store: f.store as unknown as ConsumerStore,
      transport: t.transport,
      logger: silentLogger,
      parallelism: 4,
      batchSize: 5,
    }).on('entry.posted', async (p: { n: number }, { tx, envelope }) => {
      await effects.insert(tx, envelope.id, 'ledger', String(p.n));
      await new Promise((r) => setTimeout(r, p.n % 3)); // handlers that take varying time
      seen.set(envelope.orderingKey, [...(seen.get(envelope.orderingKey) ?? []), p.n]);
    });
    await consumer.start();
    for (let n = 0; n < 200; n++) {
      // The business key is left to its default, the message id: unique, so it says nothing of order.
      await t.publishRaw('entry.posted', wire({ type: 'entry.posted', orderingKey: `acct-${n % 8}`, payload: { n } }));
    }
    await waitFor('all handled', async () => (await effects.rows()).length === 200);
    await consumer.stop();
    expect([...seen.keys()].sort()).toEqual(Array.from({ length: 8 }, (_, k) => `acct-${k}`));
    for (const ns of seen.values()) expect(ns).toEqual([...ns].sort((a, b) => a - b));
  });
});
