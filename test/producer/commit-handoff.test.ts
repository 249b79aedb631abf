import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { OutboxStore } from '../../src/ports/outbox-store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { RelayOptions } from '../../src/producer/relay-options.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { testEnv } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

type Rabbit = Awaited<ReturnType<typeof createRabbitMqTransport>>;

const variants: [name: string, make: (typeof storeFixtures)['postgres'], mode: Partial<RelayOptions>][] = [
  ['postgres', storeFixtures.postgres, {}],
  ['postgres, lease claims', storeFixtures.postgres, { lockedClaims: false }],
  ['mysql', storeFixtures.mysql, {}],
  ['sqlite', storeFixtures.sqlite, {}],
];

for (const [name, makeFixture, mode] of variants) {
  describe(`outbox.transaction hands its rows to the relay in its process (${name}, RabbitMQ)`, () => {
    let f: StoreFixture;
    let probe: RabbitProbe;
    let transport: Rabbit;
    let relays: OutboxRelay[];
    let claims: number;
    /** f.store, counting the claims made through it. */
    let counted: OutboxStore;

    beforeEach(async () => {
      f = await makeFixture('handoff');
      probe = await RabbitProbe.open('handoff');
      transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
      relays = [];
      claims = 0;
      counted = Object.create(f.store) as OutboxStore;
      counted.claim = (req) => (claims++, f.store.claim(req));
      if (f.store.claimLocked) counted.claimLocked = (req) => (claims++, f.store.claimLocked!(req));
    });
    afterEach(async () => {
      for (const r of relays) await r.stop();
      await transport.close();
      await probe.close();
      await f.teardown();
    });

    /** A relay that claims only when woken: no poll, no NOTIFY. */
    const relay = (extra: Partial<RelayOptions> = {}) => {
      const r = new OutboxRelay({
        store: counted,
        publisher: transport,
        logger: silentLogger,
        retention: false,
        listen: false,
        pollIntervalMs: 600_000,
        ...mode,
        ...extra,
      });
      relays.push(r);
      return r;
    };
    /** Started, its first claim (of nothing) done. */
    const started = async (r: OutboxRelay) => {
      await r.start();
      await waitFor('the first claim', () => claims > 0 && r.lastClaimedAt !== null);
      await waitFor('the first claim settled', async () => {
        const before = claims;
        await new Promise((res) => setTimeout(res, 20));
        return claims === before;
      });
      return claims;
    };

    it('publishes a committed row at once without claiming it, and marks it sent on the confirm', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      const before = await started(relay({ outbox }));
      const added = await outbox.transaction((tx) =>
        outbox.add(tx, { type: 'order.created', key: 'o-1', payload: {} }),
      );
      expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
      await waitFor('the row marked sent', async () => (await f.store.get(added.messageId))?.status === 'sent');
      expect(await f.store.get(added.messageId)).toMatchObject({ claimedBy: null, attempts: 0 });
      expect(claims).toBe(before); // nobody claimed it: the relay had it from the commit

      // The same business event again: a duplicate, not published a second time.
      const dup = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', key: 'o-1', payload: {} }));
      expect(dup).toMatchObject({ duplicate: true, messageId: added.messageId });
      const later = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.paid', payload: {} }));
      expect(await probe.collect(queue, 1, 10_000)).toEqual([later.messageId]);
    });

    it('publishes nothing a rollback to a savepoint undid, and the rest of that transaction by a claim', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      await started(relay({ outbox }));
      const [undone, kept] = await outbox.transaction(async (tx) => {
        await tx.query('SAVEPOINT before_add');
        const a = await outbox.add(tx, { type: 'order.created', payload: { undone: true } });
        await tx.query('ROLLBACK TO SAVEPOINT before_add');
        const b = await outbox.add(tx, { type: 'order.paid', payload: {} });
        return [a, b];
      });
      expect(await f.store.get(undone.messageId)).toBeUndefined();
      expect(await probe.collect(queue, 1, 10_000)).toEqual([kept.messageId]);
      await waitFor('the kept row marked sent', async () => (await f.store.get(kept.messageId))?.status === 'sent');
      expect(await probe.count(queue)).toBe(0);
      expect(await f.store.stats()).toMatchObject({ pending: 0, sent: 1 });
    });

    it('makes a commit due at once for any relay when its own relay cannot reach the broker', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      const own = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
      await started(relay({ outbox, publisher: own }));
      await own.close(); // its connection is gone: the relay cannot publish what it is handed
      const added = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
      await waitFor('the row let go', async () => (await f.store.get(added.messageId))?.claimedBy === null);
      expect((await f.store.get(added.messageId))!.nextAttemptAt).toBeLessThanOrEqual(Date.now());
      // Another relay, woken by nothing, finds it due on its first claim, long before the lease (60 s) would end.
      await relay({ store: f.store, pollIntervalMs: 50 }).start();
      expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
    });

    it('reschedules a handed row the broker cannot route, like any failed publish', async () => {
      await probe.bindQueue('order.paid'); // nothing for order.created
      const outbox = new Outbox({ store: f.store });
      const before = await started(relay({ outbox, backoff: { schedule: [60_000] } }));
      const added = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
      await waitFor('the failure recorded', async () => (await f.store.get(added.messageId))?.attempts === 1);
      const row = (await f.store.get(added.messageId))!;
      expect(row).toMatchObject({ status: 'pending', claimedBy: null });
      expect(row.lastError).toMatch(/unroutable|returned|no route/i);
      expect(row.nextAttemptAt).toBeGreaterThan(Date.now() + 30_000);
      expect(claims).toBe(before);
    });

    it('is not handed anything by an ordered outbox: the claim keeps each key in order', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store, ordered: true });
      const before = await started(relay({ outbox, ordered: true }));
      const added = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
      expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
      expect(claims).toBeGreaterThan(before);
    });
  });
}
