/**
 * The transaction cases of the store conformance suites: what a store's statements do inside the
 * caller's transaction (commit, rollback, statements issued at once, two open transactions). The
 * outbox and consumer suites run them for every store; an ORM adapter runs them with transactions
 * opened through the ORM (runTransactionConformance), so they are written once.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewOutboxRow } from '../../src/ports/outbox-store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { newRow } from '../support/rows.js';
import { failure, GROUP, retryAt } from './failure-records.js';
import type { StoreFixture } from './outbox-store-suite.js';
import { versionGuardCases } from './version-guard-cases.js';

/** What the transaction cases use of a fixture: the store, transactions held open, and whether two can be. */
export type TransactionFixture = Pick<StoreFixture, 'store' | 'begin' | 'concurrentWriters' | 'teardown'>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const zeros = { pending: 0, replaying: 0, resolved: 0, ignored: 0, dead: 0 };

/** The outbox's transaction cases: adds committed, rolled back, issued at once, and beside a failure. */
export function outboxTransactionCases(fixture: () => TransactionFixture): void {
  describe('outbox in transactions', () => {
    const add = async (row: NewOutboxRow, ordered = false) => {
      const f = fixture();
      const t = await f.begin();
      const res = await f.store.outbox.insert(t.tx, row, { ordered });
      await t.commit();
      return res;
    };
    const claimAll = (now: number, owner = 'r1', limit = 1000, ordered = false) =>
      fixture().store.outbox.claim({ owner, limit, now, leaseMs: 10_000, ordered });

    it('keeps a committed row and leaves no trace of a rolled-back one', async () => {
      const f = fixture();
      const kept = newRow();
      const lost = newRow();
      await add(kept);
      const t = await f.begin();
      await f.store.outbox.insert(t.tx, lost, { ordered: false });
      await t.rollback();
      expect((await f.store.outbox.get(kept.messageId))?.status).toBe('pending');
      expect(await f.store.outbox.get(lost.messageId)).toBeUndefined();
      const claimed = await claimAll(10_000);
      expect(claimed.map((r) => r.messageId)).toEqual([kept.messageId]);
    });

    it('does not skip a row that commits after a row with a higher seq', async () => {
      const f = fixture();
      if (!f.concurrentWriters) return;
      const early = await f.begin();
      const lowRow = newRow();
      await f.store.outbox.insert(early.tx, lowRow, { ordered: false });
      const highRow = newRow();
      await add(highRow);
      expect((await claimAll(10_000)).map((r) => r.messageId)).toEqual([highRow.messageId]);
      await early.commit();
      expect((await claimAll(10_000)).map((r) => r.messageId)).toEqual([lowRow.messageId]);
    });

    it('reports a duplicate add as not inserted, even when another transaction committed it after this one began', async () => {
      const f = fixture();
      if (!f.concurrentWriters) return; // one writer at a time: no other commit can come in between
      const mine = newRow({ type: 'order.created', key: 'dup-late' });
      const theirs = newRow({ type: 'order.created', key: 'dup-late' });
      const t = await f.begin();
      try {
        await t.tx.query(`SELECT count(*) AS n FROM ${f.store.tables.outbox}`); // fixes the snapshot where reads have one
        expect((await add(theirs)).inserted).toBe(true);
        expect(await f.store.outbox.insert(t.tx, mine, { ordered: false })).toEqual({
          inserted: false,
          messageId: theirs.messageId,
        });
      } finally {
        await t.rollback();
      }
    });

    it('runs work in a store transaction and rolls back on error', async () => {
      const f = fixture();
      const row = newRow();
      await expect(
        f.store.transaction(async (tx) => {
          await f.store.outbox.insert(tx, row, { ordered: false });
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      expect(await f.store.outbox.get(row.messageId)).toBeUndefined();
      await f.store.transaction((tx) => f.store.outbox.insert(tx, row, { ordered: false }));
      expect(await f.store.outbox.get(row.messageId)).toBeDefined();
    });

    // The README's advice: issue the add together with the business statement (pipelined on pg).
    it('adds rows issued at once with other statements, and keeps none when one of them fails', async () => {
      const f = fixture();
      const [a, b, c, d] = [newRow(), newRow(), newRow(), newRow()];
      await f.store.transaction((tx) =>
        Promise.all([
          tx.query('SELECT 1'),
          f.store.outbox.insert(tx, a, { ordered: false }),
          f.store.outbox.insert(tx, b, { ordered: false }),
        ]),
      );
      await expect(
        f.store.transaction((tx) =>
          Promise.all([
            tx.query('SELECT * FROM surety_no_such_table'),
            f.store.outbox.insert(tx, c, { ordered: false }),
          ]),
        ),
      ).rejects.toThrow(/surety_no_such_table/);
      // The connection, and its prepared statements, still serve the next transaction.
      await f.store.transaction((tx) => f.store.outbox.insert(tx, d, { ordered: false }));
      const ids = (await claimAll(Date.now() + 60_000)).map((r) => r.messageId);
      expect(ids.sort()).toEqual([a.messageId, b.messageId, d.messageId].sort());
    });

    // Statements of an add still waiting when something beside it fails (queued behind another
    // statement, or the later steps of an ordered add) must not run after the rollback, outside it.
    it('keeps nothing of an add issued beside a statement or code that fails', async () => {
      const f = fixture();
      await add(newRow({ orderingKey: 'shared' }), true);
      const failures: [(tx: SqlExecutor) => Promise<unknown>, RegExp][] = [
        [(tx) => tx.query('SELECT * FROM surety_no_such_table'), /surety_no_such_table/],
        [() => Promise.reject(new Error('business rule failed')), /business rule failed/],
      ];
      for (const [fail, error] of failures) {
        for (const ordered of [false, true]) {
          for (const between of [0, 1, 2]) {
            const late = newRow({ orderingKey: 'shared' });
            let adding: Promise<unknown> | undefined;
            await expect(
              f.store.transaction((tx) => {
                const failing = fail(tx); // first, as in the README's Promise.all
                const others = Array.from({ length: between }, () => tx.query('SELECT 1'));
                adding = f.store.outbox.insert(tx, late, { ordered });
                return Promise.all([failing, ...others, adding]);
              }),
            ).rejects.toThrow(error);
            await adding!.catch(() => undefined); // refused, failed in the aborted transaction, or rolled back
            expect(await f.store.outbox.get(late.messageId), `ordered ${ordered}, ${between} between`).toBeUndefined();
          }
        }
      }
      await expect(f.store.transaction((tx) => tx.query('SELECT 1'))).resolves.toBeDefined();
    });
  });
}

/** The inbox's and dead letters' transaction cases: records committed or rolled back, and two transactions on one row. */
export function consumerTransactionCases(fixture: () => TransactionFixture): void {
  describe('inbox and dead letters in transactions', () => {
    it('records an inbox row once per group, and a rolled-back one leaves nothing', async () => {
      const f = fixture();
      const id = randomUUID();
      const t = await f.begin();
      expect(await f.store.inbox.recordInbox(t.tx, id, GROUP, 1_000)).toBe(true);
      // A duplicate inside the same transaction leaves it usable (MySQL: only the statement rolls back).
      expect(await f.store.inbox.recordInbox(t.tx, id, GROUP, 1_001)).toBe(false);
      expect(await f.store.inbox.recordInbox(t.tx, id, 'shipping', 1_002)).toBe(true);
      await t.commit();
      expect(await f.store.transaction((tx) => f.store.inbox.recordInbox(tx, id, GROUP, 2_000))).toBe(false);
      expect(await f.store.inbox.inboxRecordedAt(id, GROUP)).toBe(1_000);
      expect(await f.store.inbox.inboxRecordedAt(id, 'shipping')).toBe(1_002);

      const lost = randomUUID();
      const r = await f.begin();
      expect(await f.store.inbox.recordInbox(r.tx, lost, GROUP, 3_000)).toBe(true);
      await r.rollback();
      expect(await f.store.inbox.inboxRecordedAt(lost, GROUP)).toBeUndefined();
      expect(await f.store.transaction((tx) => f.store.inbox.recordInbox(tx, lost, GROUP, 4_000))).toBe(true);
    });

    it('counts concurrent failures of one message from two open transactions on one row', async () => {
      const f = fixture();
      if (!f.concurrentWriters) return;
      const record = failure();
      const a = await f.begin();
      const b = await f.begin();
      const first = await f.store.deadLetters.recordDeliveryFailure(a.tx, record, retryAt(5_000));
      // b finds a's uncommitted row through the unique key and waits for it.
      let settled = false;
      const pending = f.store.deadLetters
        .recordDeliveryFailure(b.tx, { ...record, now: 2_000 }, retryAt(6_000))
        .finally(() => (settled = true));
      await sleep(100);
      expect(settled).toBe(false);
      await a.commit();
      const second = await pending;
      await b.commit();
      expect(first.attempts).toBe(1);
      expect(second).toEqual({ id: first.id, attempts: 2, status: 'pending', nextRetryAt: 6_000 });
      expect(await f.store.deadLetters.countDeadLetters()).toEqual({ ...zeros, pending: 1 });
    });

    it('inserts afresh when the concurrent first writer rolls back', async () => {
      const f = fixture();
      if (!f.concurrentWriters) return;
      const record = failure();
      const a = await f.begin();
      const b = await f.begin();
      await f.store.deadLetters.recordDeliveryFailure(a.tx, record, retryAt(5_000));
      const pending = f.store.deadLetters.recordDeliveryFailure(b.tx, record, retryAt(6_000));
      await sleep(100);
      await a.rollback();
      const second = await pending;
      await b.commit();
      expect(second).toMatchObject({ attempts: 1, nextRetryAt: 6_000 });
      expect(await f.store.deadLetters.getDeadLetter(record.messageId, GROUP)).toMatchObject({
        id: second.id,
        attempts: 1,
      });
    });
  });
}

/**
 * The transaction cases alone, for a fixture whose `begin` and store transactions run through an ORM:
 *
 *   runTransactionConformance('kysely on postgres', () => makeKyselyFixture('postgres'));
 */
export function runTransactionConformance(name: string, makeFixture: () => Promise<TransactionFixture>): void {
  describe(`store transaction conformance: ${name}`, () => {
    let f: TransactionFixture;
    beforeEach(async () => {
      f = await makeFixture();
    });
    afterEach(async () => {
      await f?.teardown();
    });
    outboxTransactionCases(() => f);
    consumerTransactionCases(() => f);
    versionGuardCases(() => f);
  });
}
