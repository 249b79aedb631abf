/**
 * Outbox store conformance suite. Every database adapter runs it:
 *
 *   runOutboxStoreConformance('postgres', () => makePostgresFixture());
 *
 * The fixture gives a migrated store in an isolated schema or table prefix, a way to open a
 * transaction on a second connection, and the claim query's plan text.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewOutboxRow } from '../../src/ports/outbox-store.js';
import type { Store } from '../../src/ports/store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import type { TableNames } from '../../src/stores/sql/naming.js';
import { newRow } from '../support/rows.js';
import { outboxTransactionCases } from './transaction-cases.js';

export interface OpenTransaction {
  readonly tx: SqlExecutor;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface StoreFixture {
  /** The whole store: every suite (outbox, consumer, admin) uses its concerns. */
  readonly store: Store & { readonly tables: TableNames };
  /** A transaction on its own connection, left open until commit/rollback. */
  begin(): Promise<OpenTransaction>;
  /** The plan of the claim query as text, after the fixture made statistics misleading. */
  claimPlan(ordered: boolean): Promise<string>;
  /** Name of the index the claim must use. */
  readonly claimIndex: string;
  /** Whether two transactions can be open at once (SQLite allows one writer). */
  readonly concurrentWriters: boolean;
  /** Environment that lets a child process open this same store (test/support/store-from-env.ts). */
  readonly childEnv: Readonly<Record<string, string>>;
  teardown(): Promise<void>;
}

export function runOutboxStoreConformance(name: string, makeFixture: () => Promise<StoreFixture>): void {
  describe(`outbox store conformance: ${name}`, () => {
    let f: StoreFixture;
    beforeEach(async () => {
      f = await makeFixture();
    });
    afterEach(async () => {
      await f?.teardown();
    });

    const add = async (row: NewOutboxRow, ordered = false) => {
      const t = await f.begin();
      const res = await f.store.outbox.insert(t.tx, row, { ordered });
      await t.commit();
      return res;
    };
    const claimAll = (now: number, owner = 'r1', limit = 1000, ordered = false) =>
      f.store.outbox.claim({ owner, limit, now, leaseMs: 10_000, ordered });

    it('migrates idempotently, also concurrently', async () => {
      await Promise.all([f.store.migrate(), f.store.migrate()]);
      await f.store.migrate();
      expect(await f.store.outbox.stats()).toEqual({ pending: 0, sent: 0, dead: 0, oldestPendingAt: null });
    });

    it('stores the row faithfully', async () => {
      const row = {
        ...newRow(),
        headers: { tenant: 'acme' },
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      };
      await add(row);
      const got = (await f.store.outbox.get(row.messageId))!;
      expect(got).toMatchObject({
        messageId: row.messageId,
        type: row.type,
        key: row.key,
        topic: row.topic,
        version: 1,
        headers: { tenant: 'acme' },
        payload: row.payload,
        traceparent: row.traceparent,
        createdAt: row.createdAt,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: row.createdAt,
        sentAt: null,
      });
    });

    it('keeps one row for the same (type, key) and reports the existing id', async () => {
      const first = newRow({ key: 'order-1' });
      const second = newRow({ key: 'order-1' });
      expect(await add(first)).toEqual({ inserted: true, messageId: first.messageId });
      expect(await add(second)).toEqual({ inserted: false, messageId: first.messageId });
      expect(await add(newRow({ key: 'order-1', type: 'order.paid' }))).toMatchObject({ inserted: true });
      expect((await f.store.outbox.stats()).pending).toBe(2);
    });

    it('claims only due rows, and a claim hides rows until its lease expires', async () => {
      const a = newRow({ createdAt: 1_000 });
      const b = newRow({ createdAt: 5_000 });
      await add(a);
      await add(b);
      expect((await claimAll(2_000)).map((r) => r.messageId)).toEqual([a.messageId]);
      expect((await claimAll(6_000, 'r2')).map((r) => r.messageId)).toEqual([b.messageId]);
      expect(await claimAll(6_000, 'r3')).toEqual([]);
      // r1's lease ran from 2,000 for 10 s: at 12,000 the row is due again for anyone.
      const retaken = await claimAll(12_000, 'r3');
      expect(retaken.map((r) => r.messageId)).toEqual([a.messageId]);
      expect(retaken[0]!.claimedBy).toBe('r3');
    });

    it('never gives one row to two concurrent claimers', async () => {
      for (let i = 0; i < 200; i++) await add(newRow());
      const claims = await Promise.all(
        ['a', 'b', 'c', 'd'].map((o) =>
          f.store.outbox.claim({ owner: o, limit: 30, now: 10_000, leaseMs: 60_000, ordered: false }),
        ),
      );
      const ids = claims.flat().map((r) => r.seq);
      expect(ids.length).toBe(120);
      expect(new Set(ids).size).toBe(120);
    });

    it('marks sent only pending rows, and records failures only for the claim owner', async () => {
      const a = newRow();
      const b = newRow();
      await add(a);
      await add(b);
      const [ra, rb] = await claimAll(10_000);
      expect(await f.store.outbox.markSent([ra!.seq], 20_000)).toBe(1);
      expect(await f.store.outbox.markSent([ra!.seq], 21_000)).toBe(0);
      expect(await f.store.outbox.get(a.messageId)).toMatchObject({ status: 'sent', sentAt: 20_000, claimedBy: null });
      const failure = { seq: rb!.seq, attempts: 1, nextAttemptAt: 30_000, dead: false, error: 'nacked' };
      expect(await f.store.outbox.recordFailure({ ...failure, owner: 'someone-else' })).toBe(false);
      expect(await f.store.outbox.recordFailure({ ...failure, owner: 'r1' })).toBe(true);
      expect(await f.store.outbox.get(b.messageId)).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: 30_000,
        lastError: 'nacked',
      });
      expect(await claimAll(29_999)).toEqual([]);
      const again = await claimAll(30_000);
      expect(
        await f.store.outbox.recordFailure({ ...failure, seq: again[0]!.seq, attempts: 2, dead: true, owner: 'r1' }),
      ).toBe(true);
      expect(await f.store.outbox.get(b.messageId)).toMatchObject({ status: 'dead', attempts: 2 });
      expect(await claimAll(10_000_000)).toEqual([]);
      expect(await f.store.outbox.stats()).toMatchObject({ pending: 0, sent: 1, dead: 1 });
    });

    it('records an uncharged failure as a reschedule only: attempts and history untouched, for the claim owner', async () => {
      const a = newRow();
      await add(a);
      const [r] = await claimAll(10_000);
      const charged = { seq: r!.seq, owner: 'r1', attempts: 1, nextAttemptAt: 20_000, dead: false, error: 'nacked' };
      expect(await f.store.outbox.recordFailure(charged)).toBe(true);
      const [again] = await claimAll(20_000);
      const lost = { ...charged, seq: again!.seq, nextAttemptAt: 30_000, error: 'SURETY_CONNECTION_LOST: gone' };
      expect(await f.store.outbox.recordFailure({ ...lost, owner: 'someone-else', charged: false })).toBe(false);
      expect(await f.store.outbox.recordFailure({ ...lost, charged: false })).toBe(true);
      expect(await f.store.outbox.get(a.messageId)).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: 30_000,
        claimedBy: null,
        lastError: 'SURETY_CONNECTION_LOST: gone',
      });
      const history = (await f.store.admin.lineage(a.messageId))?.outbox?.history ?? [];
      expect(history.map((h) => [h.attempt, h.outcome, h.error])).toEqual([[1, 'failed', 'nacked']]);
      expect(await claimAll(29_999)).toEqual([]);
      expect((await claimAll(30_000)).map((x) => x.messageId)).toEqual([a.messageId]);
    });

    it('releases claims so rows are due at once', async () => {
      const a = newRow();
      await add(a);
      const [r] = await claimAll(10_000);
      expect(await f.store.outbox.release('other', [r!.seq], 10_001)).toBe(0);
      expect(await f.store.outbox.release('r1', [r!.seq], 10_001)).toBe(1);
      expect((await claimAll(10_001, 'r2')).map((x) => x.messageId)).toEqual([a.messageId]);
    });

    it('in ordered mode claims only the first unsent row of each ordering key', async () => {
      const k1 = [newRow({ orderingKey: 'o-1' }), newRow({ orderingKey: 'o-1' }), newRow({ orderingKey: 'o-1' })];
      const k2 = [newRow({ orderingKey: 'o-2' }), newRow({ orderingKey: 'o-2' })];
      for (const r of [k1[0]!, k2[0]!, k1[1]!, k2[1]!, k1[2]!]) await add(r, true);
      let claimed = await claimAll(10_000, 'r1', 1000, true);
      expect(claimed.map((r) => r.messageId).sort()).toEqual([k1[0]!.messageId, k2[0]!.messageId].sort());
      expect(await claimAll(10_000, 'r2', 1000, true)).toEqual([]);
      // A failed head keeps blocking its key.
      const head1 = claimed.find((r) => r.messageId === k1[0]!.messageId)!;
      await f.store.outbox.recordFailure({
        seq: head1.seq,
        owner: 'r1',
        attempts: 1,
        nextAttemptAt: 50_000,
        dead: false,
        error: 'x',
      });
      await f.store.outbox.markSent([claimed.find((r) => r.messageId === k2[0]!.messageId)!.seq], 11_000);
      claimed = await claimAll(12_000, 'r1', 1000, true);
      expect(claimed.map((r) => r.messageId)).toEqual([k2[1]!.messageId]);
      await f.store.outbox.markSent([claimed[0]!.seq], 12_001);
      claimed = await claimAll(50_000, 'r1', 1000, true);
      expect(claimed.map((r) => r.messageId)).toEqual([k1[0]!.messageId]);
      await f.store.outbox.markSent([claimed[0]!.seq], 50_001);
      claimed = await claimAll(50_002, 'r1', 1000, true);
      expect(claimed.map((r) => r.messageId)).toEqual([k1[1]!.messageId]);
    });

    it('in ordered mode is not held back by an unordered row of the same key, even a dead one', async () => {
      // Written before ordering was turned on: no place in the key's order.
      const unordered = newRow({ orderingKey: 'o-1' });
      await add(unordered, false);
      const [old] = await claimAll(10_000);
      await f.store.outbox.recordFailure({
        seq: old!.seq,
        owner: 'r1',
        attempts: 1,
        nextAttemptAt: 10_000,
        dead: true,
        error: 'x',
      });
      const ordered = newRow({ orderingKey: 'o-1' });
      await add(ordered, true);
      expect((await claimAll(10_001, 'r1', 1000, true)).map((r) => r.messageId)).toEqual([ordered.messageId]);
    });

    it('purges only sent rows older than the limit, in bounded batches', async () => {
      const rows = Array.from({ length: 7 }, () => newRow());
      for (const r of rows) await add(r);
      const claimed = await claimAll(10_000);
      const bySeq = claimed.map((r) => r.seq);
      await f.store.outbox.markSent(bySeq.slice(0, 3), 100_000); // old
      await f.store.outbox.markSent(bySeq.slice(3, 5), 900_000); // recent
      expect(await f.store.outbox.purgeSent(500_000, 2)).toBe(2);
      expect(await f.store.outbox.purgeSent(500_000, 2)).toBe(1);
      expect(await f.store.outbox.purgeSent(500_000, 2)).toBe(0);
      expect(await f.store.outbox.stats()).toMatchObject({ pending: 2, sent: 2 });
      for (const r of claimed.slice(3)) expect(await f.store.outbox.get(r.messageId)).toBeDefined();
    });

    it('purges the attempt history of purged rows and keeps that of the others', async () => {
      const [old, kept] = [newRow(), newRow()];
      await add(old);
      await add(kept);
      const claimed = await claimAll(10_000);
      for (const r of claimed) {
        const failure = { seq: r.seq, attempts: 1, nextAttemptAt: 10_000, dead: false, error: 'nacked', now: 10_000 };
        expect(await f.store.outbox.recordFailure({ ...failure, owner: 'r1' })).toBe(true);
      }
      const again = await claimAll(20_000);
      await f.store.outbox.markSent([again.find((r) => r.messageId === old.messageId)!.seq], 100_000);
      const attemptsOf = async (id: string) => (await f.store.admin.lineage(id))?.outbox?.history.length ?? 0;
      expect(await attemptsOf(old.messageId)).toBe(1);
      expect(await f.store.outbox.purgeSent(500_000, 10)).toBe(1);
      const { rows } = await f.store.transaction((tx) =>
        tx.query(`SELECT message_id FROM ${f.store.tables.outboxAttempts}`),
      );
      expect(rows.map((r) => String(r.message_id))).toEqual([kept.messageId]);
      expect(await attemptsOf(kept.messageId)).toBe(1);
    });

    it('grants a lease to one owner until it expires', async () => {
      expect(await f.store.outbox.acquireLease('job', 'a', 1_000, 5_000)).toBe(true);
      expect(await f.store.outbox.acquireLease('job', 'b', 2_000, 5_000)).toBe(false);
      expect(await f.store.outbox.acquireLease('job', 'a', 3_000, 5_000)).toBe(true);
      expect(await f.store.outbox.acquireLease('job', 'b', 7_999, 5_000)).toBe(false);
      expect(await f.store.outbox.acquireLease('job', 'b', 8_001, 5_000)).toBe(true);
      expect(await f.store.outbox.acquireLease('job', 'a', 8_002, 5_000)).toBe(false);
    });

    it('reports stats with the oldest pending creation time', async () => {
      await add(newRow({ createdAt: 3_000 }));
      await add(newRow({ createdAt: 2_000 }));
      expect(await f.store.outbox.stats()).toEqual({ pending: 2, sent: 0, dead: 0, oldestPendingAt: 2_000 });
    });

    it('runs the claim on its index whatever the statistics say', async () => {
      for (let i = 0; i < 300; i++) await add(newRow());
      for (const ordered of [false, true]) {
        const plan = await f.claimPlan(ordered);
        expect(plan).toContain(f.claimIndex);
        expect(plan).not.toMatch(/Seq Scan|SCAN [a-z0-9_]*outbox(?! USING)|type: ALL|\bALL\b.*outbox/i);
      }
    });

    outboxTransactionCases(() => f);
  });
}
