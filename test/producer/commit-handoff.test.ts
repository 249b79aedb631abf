import { createConnection } from 'mysql2/promise';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { OutboxStore } from '../../src/ports/outbox-store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { newMessageId } from '../../src/core/envelope.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { RelayOptions } from '../../src/producer/relay-options.js';
import type { SqliteStore } from '../../src/stores/sqlite/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { storeFixtures } from '../support/stores.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { waitFor } from '../support/wait.js';

type Rabbit = Awaited<ReturnType<typeof createRabbitMqTransport>>;

const variants: [name: string, make: (typeof storeFixtures)['postgres'], mode: Partial<RelayOptions>][] = [
  ['postgres', storeFixtures.postgres, {}],
  ['postgres, lease claims', storeFixtures.postgres, { lockedClaims: false }],
  // Statements wait their turn on a plain pool: the check before the COMMIT is a round trip of its own.
  ['postgres, plain pool', (label) => makePostgresFixture(label, { pipeline: false }), {}],
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
    /** Message ids of the rows claimed through `counted`. */
    let claimed: string[];
    /** f.store, counting the claims made through it. */
    let counted: OutboxStore;

    beforeEach(async () => {
      f = await makeFixture('handoff');
      probe = await RabbitProbe.open('handoff');
      transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
      relays = [];
      claims = 0;
      claimed = [];
      counted = Object.create(f.store.outbox) as OutboxStore;
      counted.claim = async (req) => {
        claims++;
        const rows = await f.store.outbox.claim(req);
        claimed.push(...rows.map((r) => r.messageId));
        return rows;
      };
      if (f.store.outbox.claimLocked)
        counted.claimLocked = async (req) => {
          claims++;
          const batch = await f.store.outbox.claimLocked!(req);
          claimed.push(...batch.rows.map((r) => r.messageId));
          return batch;
        };
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
        store: { ...f.store, outbox: counted },
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
    /** f.store, counting claims, whose insert of an `order.created` row reports back only once `gate` opens. */
    const reportingLate = (gate: Promise<void>) => {
      const late = Object.create(counted) as OutboxStore;
      late.insert = async (tx, row, options) => {
        const res = await f.store.outbox.insert(tx, row, options);
        if (row.type === 'order.created') await gate;
        return res;
      };
      return late;
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
      await waitFor('the row marked sent', async () => (await f.store.outbox.get(added.messageId))?.status === 'sent');
      expect(await f.store.outbox.get(added.messageId)).toMatchObject({ claimedBy: null, attempts: 0 });
      expect(claims).toBe(before); // nobody claimed it: the relay had it from the commit
      expect(claimed).toEqual([]);

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
      expect(await f.store.outbox.get(undone.messageId)).toBeUndefined();
      expect(await probe.collect(queue, 1, 10_000)).toEqual([kept.messageId]);
      await waitFor(
        'the kept row marked sent',
        async () => (await f.store.outbox.get(kept.messageId))?.status === 'sent',
      );
      expect(await probe.count(queue)).toBe(0);
      expect(await f.store.outbox.stats()).toMatchObject({ pending: 0, sent: 1 });
    });

    it('makes a commit due at once for any relay when its own relay cannot reach the broker', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      const own = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
      await started(relay({ outbox, publisher: own }));
      await own.close(); // its connection is gone: the relay cannot publish what it is handed
      const added = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
      await waitFor('the row let go', async () => (await f.store.outbox.get(added.messageId))?.claimedBy === null);
      expect((await f.store.outbox.get(added.messageId))!.nextAttemptAt).toBeLessThanOrEqual(Date.now());
      // Another relay, woken by nothing, finds it due on its first claim, long before the lease (60 s) would end.
      await relay({ store: f.store, pollIntervalMs: 50 }).start();
      expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
    });

    it('hands over a transaction whose caught failures undid nothing: a failed statement, a duplicate add', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      const first = await outbox.transaction((tx) =>
        outbox.add(tx, { type: 'order.created', key: 'o-1', payload: {} }),
      );
      await started(relay({ outbox }));
      expect(await probe.collect(queue, 1, 10_000)).toEqual([first.messageId]);
      await waitFor(
        'the first row marked sent',
        async () => (await f.store.outbox.get(first.messageId))?.status === 'sent',
      );
      const commit = outbox.transaction(async (tx) => {
        // MySQL refuses the duplicate with a key error the store recovers from, in the caller's transaction.
        const dup = await outbox.add(tx, { type: 'order.created', key: 'o-1', payload: {} });
        await tx.query('SELECT * FROM surety_no_such_table').catch(() => undefined);
        const b = await outbox.add(tx, { type: 'order.paid', payload: {} });
        return [dup, b] as const;
      });
      if (name.startsWith('postgres')) {
        // PostgreSQL aborts the whole transaction: the next add is refused, nothing was written.
        await expect(commit).rejects.toThrow(/current transaction is aborted/);
        expect(await f.store.outbox.stats()).toMatchObject({ pending: 0, sent: 1 });
        return;
      }
      const [dup, b] = await commit;
      expect(dup).toMatchObject({ duplicate: true, messageId: first.messageId });
      expect(await probe.collect(queue, 1, 10_000)).toEqual([b.messageId]);
      await waitFor('the row marked sent', async () => (await f.store.outbox.get(b.messageId))?.status === 'sent');
      expect(claimed).toEqual([first.messageId]); // b handed over, not claimed
    });

    it('never publishes a row undone by a statement that does not say ROLLBACK, and loses none', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      await started(relay({ outbox }));
      const undo = await undoer(name, f);
      try {
        const [a, b] = await outbox.transaction(async (tx) => {
          const a = await outbox.add(tx, { type: 'order.created', payload: {} });
          await undo(tx, { reopen: true });
          // Committed: on its own (PostgreSQL, MySQL) or in the transaction reopened (SQLite).
          const b = await outbox.add(tx, { type: 'order.paid', payload: {} });
          return [a, b] as const;
        });
        expect(await f.store.outbox.get(a.messageId)).toBeUndefined();
        // b was let go with a, to a claim: a handed a would have gone out first, at this commit.
        expect(await probe.collect(queue, 1, 10_000)).toEqual([b.messageId]);
        expect(claimed).toEqual([b.messageId]);
      } finally {
        await undo.cleanup?.();
      }
    });

    it("never takes another transaction's row with the same id for its own undone one", async () => {
      if (!f.concurrentWriters) return; // SQLite: no other transaction can commit meanwhile
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      await started(relay({ outbox }));
      const id = newMessageId();
      const theirs = new Outbox({ store: f.store, notifyAfterCommit: true }); // nothing attached to it
      await outbox.transaction(async (tx) => {
        await tx.query('SAVEPOINT before_add');
        await outbox.add(tx, { id, type: 'order.created', payload: { mine: true } });
        await tx.query('ROLLBACK TO SAVEPOINT before_add');
        // Another transaction commits a row with that id before this one's check: a count by id alone finds it.
        await f.store.transaction((other) => theirs.add(other, { id, type: 'order.paid', payload: {} }));
      });
      expect(await probe.collect(queue, 1, 10_000)).toEqual([id]);
      expect(claimed).toEqual([id]); // theirs, claimed; mine was never handed over
      expect(await f.store.outbox.get(id)).toMatchObject({ type: 'order.paid' });
    });

    it('publishes only the committed one of an add retried with its own id after a rollback to a savepoint', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      await started(relay({ outbox }));
      const id = newMessageId();
      const [undone, kept] = await outbox.transaction(async (tx) => {
        await tx.query('SAVEPOINT before_add');
        const a = await outbox.add(tx, { id, type: 'order.created', payload: { attempt: 1 } });
        await tx.query('ROLLBACK TO SAVEPOINT before_add');
        // SQLite gives the undone row's seq again: the two rows look alike by (seq, id).
        const b = await outbox.add(tx, { id, type: 'order.created', payload: { attempt: 2 } });
        return [a, b];
      });
      expect(undone.messageId).toBe(kept.messageId);
      expect(await probe.collect(queue, 1, 10_000)).toEqual([id]);
      expect(claimed).toEqual([id]); // claimed from the table, with the committed payload, not handed from memory
      await waitFor('the row marked sent', async () => (await f.store.outbox.get(id))?.status === 'sent');
      expect(await probe.count(queue)).toBe(0);
    });

    it('lets go of rows committed on their own when the transaction then fails', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      await started(relay({ outbox }));
      const undo = await undoer(name, f);
      let b: string | undefined;
      try {
        const commit = outbox.transaction(async (tx) => {
          await outbox.add(tx, { type: 'order.created', payload: {} });
          await undo(tx, { reopen: false });
          b = (await outbox.add(tx, { type: 'order.paid', payload: {} })).messageId; // committed at once
          if (name !== 'sqlite') throw new Error('the callback fails after all');
          // SQLite: the store's COMMIT finds no transaction and fails.
        });
        await expect(commit).rejects.toThrow(/the callback fails after all|no transaction is active/);
        // Leased to the relay, which was handed nothing: released at once, not after its lease (60 s).
        expect(await probe.collect(queue, 1, 10_000)).toEqual([b]);
        expect(claimed).toEqual([b]);
      } finally {
        await undo.cleanup?.();
      }
    });

    it('a commit stands and its rows go out when a commit listener throws', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      outbox.onCommitted(() => {
        throw new Error('a listener that fails');
      });
      let heard = 0;
      outbox.onCommitted(() => heard++); // after the failing one
      // Nothing attached: the commit is announced to the listeners at once.
      const plain = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
      // A relay that cannot publish: its rows are let go, then announced.
      const own = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
      await started(relay({ outbox, publisher: own }));
      await own.close();
      const leased = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.paid', payload: {} }));
      await waitFor('the row let go', async () => (await f.store.outbox.get(leased.messageId))?.claimedBy === null);
      await relay({ store: f.store, pollIntervalMs: 50 }).start();
      expect(new Set(await probe.collect(queue, 2, 10_000))).toEqual(new Set([plain.messageId, leased.messageId]));
      expect(heard).toBeGreaterThanOrEqual(2); // both commits reached the listener after the failing one
    });

    it('never publishes a row that an ABORT statement undid', async () => {
      if (!name.startsWith('postgres')) return; // ABORT is PostgreSQL's ROLLBACK
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      await started(relay({ outbox }));
      // After ABORT, PostgreSQL answers the COMMIT with a warning and the COMMIT tag: the transaction "succeeds".
      const undone = await outbox.transaction(async (tx) => {
        const a = await outbox.add(tx, { type: 'order.created', payload: {} });
        await tx.query('ABORT');
        return a;
      });
      expect(await f.store.outbox.get(undone.messageId)).toBeUndefined();
      const after = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.paid', payload: {} }));
      // The undone one would have gone out first, at its own commit.
      expect(await probe.collect(queue, 1, 10_000)).toEqual([after.messageId]);
    });

    it('makes a commit due at once for any relay when its own relay is stopping', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store });
      const r = relay({ outbox });
      await started(r);
      let stopping: Promise<void> | undefined;
      const added = await outbox.transaction(async (tx) => {
        const a = await outbox.add(tx, { type: 'order.created', payload: {} });
        stopping = r.stop(); // not awaited here: on SQLite its last writes wait for this transaction
        return a;
      });
      await stopping;
      await waitFor('the row let go', async () => (await f.store.outbox.get(added.messageId))?.claimedBy === null);
      await relay({ pollIntervalMs: 50 }).start();
      expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
      expect(claimed).toContain(added.messageId); // the stopping relay did not take it
    });

    it('lets go at once of a row whose add was not awaited and ended after the handoff', async () => {
      const queue = await probe.bindQueue('order.*');
      let committed!: () => void;
      const afterCommit = new Promise<void>((r) => (committed = r));
      // The insert runs in the transaction; its result reaches the outbox only once the commit was handed over.
      const late = reportingLate(afterCommit);
      const outbox = new Outbox({ store: { outbox: late } });
      await started(relay({ outbox }));
      let adding!: Promise<{ messageId: string }>;
      await outbox.transaction(async (tx) => {
        adding = outbox.add(tx, { type: 'order.created', payload: {} });
        await tx.query('SELECT 1'); // the add's statement goes out before the callback settles
      });
      committed();
      const { messageId } = await adding;
      expect(await probe.collect(queue, 1, 10_000)).toEqual([messageId]); // long before its lease (60 s) ends
      expect(claimed).toEqual([messageId]);
    });

    it('lets go of a row whose add was not awaited and ended after the check before the commit', async () => {
      const queue = await probe.bindQueue('order.*');
      let checking!: () => void;
      const checked = new Promise<void>((r) => (checking = r));
      // The insert's result reaches the outbox after the check was sent, before the commit is handed over.
      const late = reportingLate(checked);
      late.countRows = (tx, rows) => {
        const count = f.store.outbox.countRows(tx, rows);
        checking();
        return count;
      };
      const outbox = new Outbox({ store: { outbox: late } });
      await started(relay({ outbox }));
      let adding!: Promise<{ messageId: string }>;
      await outbox.transaction(async (tx) => {
        await outbox.add(tx, { type: 'order.paid', payload: {} }); // so that there is a check
        adding = outbox.add(tx, { type: 'order.created', payload: {} });
        await tx.query('SELECT 1');
      });
      const { messageId } = await adding;
      const collected = await probe.collect(queue, 2, 10_000);
      expect(collected).toContain(messageId);
      expect(claimed).toEqual([messageId]); // the checked row was handed over; this one, unchecked, claimed
    });

    it('reschedules a handed row the broker cannot route, like any failed publish', async () => {
      await probe.bindQueue('order.paid'); // nothing for order.created
      const outbox = new Outbox({ store: f.store });
      const before = await started(relay({ outbox, backoff: { schedule: [60_000] } }));
      const added = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
      await waitFor('the failure recorded', async () => (await f.store.outbox.get(added.messageId))?.attempts === 1);
      const row = (await f.store.outbox.get(added.messageId))!;
      expect(row).toMatchObject({ status: 'pending', claimedBy: null });
      expect(row.lastError).toMatch(/unroutable|returned|no route/i);
      expect(row.nextAttemptAt).toBeGreaterThan(Date.now() + 30_000);
      expect(claims).toBe(before);
    });

    for (const missing of ['countRows', 'releaseLeased'] as const) {
      it(`is not handed anything through a store of an earlier make, without ${missing}`, async () => {
        const queue = await probe.bindQueue('order.*');
        const older = Object.create(counted) as OutboxStore;
        (older as Partial<Record<keyof OutboxStore, unknown>>)[missing] = undefined;
        const leases: unknown[] = [];
        older.insert = (tx, row, options) => {
          leases.push(options.lease);
          return f.store.outbox.insert(tx, row, options);
        };
        const outbox = new Outbox({ store: { outbox: older } });
        await started(relay({ outbox }));
        const added = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
        expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
        expect(leases).toEqual([undefined]); // inserted unclaimed...
        expect(claimed).toEqual([added.messageId]); // ...and found by a claim at once
      });
    }

    it('is not handed anything by an ordered outbox: the claim keeps each key in order', async () => {
      const queue = await probe.bindQueue('order.*');
      const outbox = new Outbox({ store: f.store, ordered: true });
      const before = await started(relay({ outbox, ordered: true }));
      const added = await outbox.transaction((tx) =>
        outbox.add(tx, { type: 'order.created', orderingKey: 'order-1', payload: {} }),
      );
      expect(await probe.collect(queue, 1, 10_000)).toEqual([added.messageId]);
      expect(claims).toBeGreaterThan(before);
    });
  });
}

type Undo = ((tx: SqlExecutor, options: { reopen: boolean }) => Promise<unknown>) & {
  cleanup?: () => Promise<void>;
};

/**
 * A statement that undoes the transaction without the word ROLLBACK or ABORT in its text. With
 * `reopen`, SQLite opens a new transaction on the driver's handle at once, so that the store's COMMIT
 * succeeds; PostgreSQL and MySQL run later statements on their own either way.
 */
async function undoer(name: string, f: StoreFixture): Promise<Undo> {
  if (name.startsWith('postgres')) {
    // pg takes a query config object too; its text is what the server runs.
    return (tx) => (tx.query as unknown as (config: { text: string }) => Promise<unknown>)({ text: 'ABORT' });
  }
  if (name === 'sqlite') {
    // The driver's own handle, beside the store's transaction.
    const { db } = f.store as SqliteStore;
    return async (_tx, { reopen }) => db.exec(reopen ? 'ROLLBACK; BEGIN' : 'ROLLBACK');
  }
  const procedure = uniqueName('undo');
  const conn = await createConnection(testEnv.mysqlUrl);
  await conn.query(`CREATE PROCEDURE ${procedure}() ROLLBACK`);
  const undo: Undo = (tx) => tx.query(`CALL ${procedure}()`);
  undo.cleanup = async () => {
    await conn.query(`DROP PROCEDURE IF EXISTS ${procedure}`);
    await conn.end();
  };
  return undo;
}
