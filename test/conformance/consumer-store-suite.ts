/**
 * Consumer store conformance suite (inbox, dead letters and version guards). Every database adapter runs it:
 *
 *   runConsumerStoreConformance('postgres', async () => ({ ...(await makePostgresFixture()), ...plan }));
 *
 * The fixture is the outbox suite's (a migrated store, transactions on a second connection) plus
 * the plans of the dead-letter claim and of the settled dead-letter purge.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeadLetterRow, FailureRecord, RetryDecision } from '../../src/ports/consumer-store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import type { StoreFixture } from './outbox-store-suite.js';
import { newRow } from '../support/rows.js';
import { failure, GROUP, retryAt } from './failure-records.js';
import { consumerTransactionCases } from './transaction-cases.js';
import { versionGuardCases } from './version-guard-cases.js';

export { failure } from './failure-records.js';

export interface ConsumerStoreFixture extends StoreFixture {
  /** The plan of the dead-letter claim as text, after the fixture made statistics misleading. */
  deadLetterClaimPlan(): Promise<string>;
  /** Names of the indexes the dead-letter claim must use. */
  readonly deadLetterClaimIndexes: readonly string[];
  /** The plan of every statement of the settled dead-letter purge, as text. */
  settledPurgePlan(): Promise<string>;
  /** Name of the index the purge must use to find settled rows. */
  readonly settledPurgeIndex: string;
}

const dead = (): RetryDecision => ({ status: 'dead', nextRetryAt: null });

export function runConsumerStoreConformance(name: string, makeFixture: () => Promise<ConsumerStoreFixture>): void {
  describe(`consumer store conformance: ${name}`, () => {
    let f: ConsumerStoreFixture;
    beforeEach(async () => {
      f = await makeFixture();
    });
    afterEach(async () => {
      await f?.teardown();
    });

    /** Records one failure per record in one transaction; returns the rows. */
    const seed = async (records: FailureRecord[], decide = retryAt(1_000)): Promise<DeadLetterRow[]> => {
      await f.store.transaction(async (tx) => {
        for (const r of records) await f.store.deadLetters.recordDeliveryFailure(tx, r, decide);
      });
      return Promise.all(records.map(async (r) => (await f.store.deadLetters.getDeadLetter(r.messageId, r.group))!));
    };
    const seedOne = async (overrides: Partial<FailureRecord> = {}, decide = retryAt(1_000)) =>
      (await seed([failure(overrides)], decide))[0]!;
    const claim = (owner: string, now = 10_000, limit = 100, leaseMs = 5_000) =>
      f.store.deadLetters.claimDue({ owner, group: GROUP, now, limit, leaseMs });
    const statusOf = async (row: DeadLetterRow) =>
      (await f.store.deadLetters.getDeadLetter(row.messageId, row.group))!.status;
    const zeros = { pending: 0, replaying: 0, resolved: 0, ignored: 0, dead: 0 };
    /** A resolved row, last changed at `at`. Claims every due row of the group: call it before seeding others. */
    const resolvedAt = async (at: number, group = GROUP) => {
      const row = await seedOne({ group }, retryAt(1_000));
      const claimed = await f.store.deadLetters.claimDue({
        owner: 'settler',
        group,
        now: at,
        limit: 100,
        leaseMs: 5_000,
      });
      expect(claimed.map((r) => r.id)).toEqual([row.id]);
      expect(await f.store.deadLetters.markResolved(row.id, 'settler', at)).toBe(true);
      return row;
    };
    /** An ignored row, last changed at `at`. */
    const ignoredAt = async (at: number, group = GROUP) => {
      const row = await seedOne({ group }, dead);
      expect(await f.store.deadLetters.ignore(row.id, 'obsolete', at)).toBe(true);
      return row;
    };
    /** How many history rows each dead letter has. */
    const historyOf = async (rows: readonly DeadLetterRow[]): Promise<number[]> => {
      const { rows: counts } = await f.store.transaction((tx) =>
        tx.query(
          `SELECT dead_letter_id AS id, count(*) AS n FROM ${f.store.tables.deadLetterEvents}
           WHERE dead_letter_id IN (${rows.map((r) => r.id).join(', ')}) GROUP BY dead_letter_id`,
        ),
      );
      return rows.map((row) => Number(counts.find((c) => Number(c.id) === row.id)?.n ?? 0));
    };
    const purge = (before: number, limit: number) => f.store.deadLetters.purgeSettledDeadLetters(before, limit);

    it('resolves many claimed rows at once, only for their owner', async () => {
      const rows = await seed([failure(), failure(), failure()], retryAt(1_000));
      const claimed = await claim('r1');
      expect(claimed).toHaveLength(3);
      const ids = claimed.map((r) => r.id);
      expect(await f.store.deadLetters.markResolvedMany(ids.slice(0, 2), 'someone-else', 11_000)).toBe(0);
      expect(await f.store.deadLetters.markResolvedMany(ids.slice(0, 2), 'r1', 11_000)).toBe(2);
      expect(await f.store.deadLetters.markResolvedMany(ids.slice(0, 2), 'r1', 11_000)).toBe(0); // already resolved
      expect(await f.store.deadLetters.markResolvedMany([], 'r1', 11_000)).toBe(0);
      expect(await Promise.all(rows.map(statusOf))).toEqual(['resolved', 'resolved', 'replaying']);
    });

    it('claims only the rows of the requested group', async () => {
      const mine = await seedOne();
      const theirs = await seedOne({ group: `${GROUP}-other` });
      expect((await claim('r1')).map((r) => r.messageId)).toEqual([mine.messageId]);
      expect(await statusOf(theirs)).toBe('pending');
      const other = await f.store.deadLetters.claimDue({
        owner: 'r2',
        group: `${GROUP}-other`,
        now: 10_000,
        limit: 100,
        leaseMs: 5_000,
      });
      expect(other.map((r) => r.messageId)).toEqual([theirs.messageId]);
    });

    it('migrates idempotently, also concurrently, and adds the consumer tables to an older schema', async () => {
      await Promise.all([f.store.migrate(), f.store.migrate()]);
      await f.store.migrate();
      const all = await appliedMigrations(f.store);
      expect(all).toEqual(all.map((_, i) => i + 1)); // each once, in order
      expect(await f.store.deadLetters.countDeadLetters()).toEqual(zeros);
      // Back to the schema of version 1, holding an outbox row, as a store migrated before this release.
      const kept = newRow();
      await f.store.transaction((tx) => f.store.outbox.insert(tx, kept, { ordered: false }));
      const t = f.store.tables;
      await f.store.transaction(async (tx) => {
        await tx.query(`DROP TABLE ${t.inbox}`);
        await tx.query(`DROP TABLE ${t.deadLetters}`);
        // Later migrations rerun over what they left (idempotent), and re-index the new table.
        await tx.query(`DELETE FROM ${t.migrations} WHERE id >= 2`);
      });
      await Promise.all([f.store.migrate(), f.store.migrate()]);
      expect(await appliedMigrations(f.store)).toEqual(all);
      expect(await f.store.outbox.get(kept.messageId)).toBeDefined();
      expect(await f.store.deadLetters.countDeadLetters()).toEqual(zeros);
      expect(await f.store.transaction((tx) => f.store.inbox.recordInbox(tx, randomUUID(), GROUP, 1))).toBe(true);
      // MySQL and SQLite name the settled index in the purge: it fails if migration 4 left none.
      expect(await f.store.deadLetters.purgeSettledDeadLetters(1_000_000, 10)).toBe(0);
    });

    it('inserts a failure with attempts 1, then increments the same row and applies each decision', async () => {
      const record = failure({ now: 1_000, error: 'first' });
      const seen: number[] = [];
      const first = await f.store.transaction((tx) =>
        f.store.deadLetters.recordDeliveryFailure(tx, record, (attempts) => {
          seen.push(attempts);
          return { status: 'pending', nextRetryAt: 5_000 };
        }),
      );
      expect(first).toMatchObject({ attempts: 1, status: 'pending', nextRetryAt: 5_000 });
      expect(await f.store.deadLetters.getDeadLetter(record.messageId, GROUP)).toEqual({
        id: first.id,
        messageId: record.messageId,
        group: GROUP,
        topic: 'orders',
        type: 'order.created',
        key: 'o-1',
        version: 1,
        headers: record.headers,
        body: record.body,
        bodyEncoding: 'utf8',
        status: 'pending',
        attempts: 1,
        nextRetryAt: 5_000,
        lastError: 'first',
        poison: false,
        ignoredReason: null,
        claimedBy: null,
        leaseUntil: null,
        createdAt: 1_000,
        updatedAt: 1_000,
      });
      const second = await f.store.transaction((tx) =>
        f.store.deadLetters.recordDeliveryFailure(tx, { ...record, now: 2_000, error: 'second' }, (attempts) => {
          seen.push(attempts);
          return dead();
        }),
      );
      expect(second).toEqual({ id: first.id, attempts: 2, status: 'dead', nextRetryAt: null });
      expect(seen).toEqual([1, 2]);
      expect(await f.store.deadLetters.getDeadLetter(record.messageId, GROUP)).toMatchObject({
        status: 'dead',
        attempts: 2,
        nextRetryAt: null,
        lastError: 'second',
        createdAt: 1_000,
        updatedAt: 2_000,
      });
      expect(await f.store.deadLetters.countDeadLetters()).toEqual({ ...zeros, dead: 1 });
    });

    it('keeps poison and base64 bodies as given, and clips a huge error', async () => {
      const record = failure({
        type: '',
        key: '',
        poison: true,
        body: Buffer.from([0xff, 0x00, 0xfe]).toString('base64'),
        bodyEncoding: 'base64',
        headers: { 'x-note': 'naïve ✓' },
        error: 'x'.repeat(10_000),
      });
      await f.store.transaction((tx) => f.store.deadLetters.recordDeliveryFailure(tx, record, dead));
      const row = (await f.store.deadLetters.getDeadLetter(record.messageId, GROUP))!;
      expect(row).toMatchObject({ type: '', key: '', poison: true, body: record.body, bodyEncoding: 'base64' });
      expect(row.headers).toEqual({ 'x-note': 'naïve ✓' });
      expect(row.lastError.length).toBeLessThanOrEqual(2_000);
    });

    it('reopens a resolved or ignored row as a new failure', async () => {
      const a = await seedOne();
      const [claimed] = await claim('r1');
      expect(await f.store.deadLetters.markResolved(claimed!.id, 'r1', 11_000)).toBe(true);
      const b = await seedOne({}, dead);
      expect(await f.store.deadLetters.ignore(b.id, 'known bad', 12_000)).toBe(true);
      for (const row of [a, b]) {
        const again = await f.store.transaction((tx) =>
          f.store.deadLetters.recordDeliveryFailure(
            tx,
            failure({ messageId: row.messageId, now: 20_000 }),
            retryAt(30_000),
          ),
        );
        expect(again).toEqual({ id: row.id, attempts: 1, status: 'pending', nextRetryAt: 30_000 });
        expect(await f.store.deadLetters.getDeadLetter(row.messageId, GROUP)).toMatchObject({
          status: 'pending',
          ignoredReason: null,
          claimedBy: null,
        });
      }
    });

    it('gives each due row to exactly one of several concurrent claimers, and leaves rows not due', async () => {
      const due = await seed(
        Array.from({ length: 60 }, () => failure()),
        retryAt(5_000),
      );
      const later = await seed(
        Array.from({ length: 5 }, () => failure()),
        retryAt(1_000_000),
      );
      const claims = await Promise.all(['a', 'b', 'c'].map((owner) => claim(owner, 10_000, 25, 60_000)));
      const ids = claims.flat().map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort((x, y) => x - y)).toEqual(due.map((r) => r.id).sort((x, y) => x - y));
      for (const [i, owner] of ['a', 'b', 'c'].entries()) {
        expect(claims[i]!.length).toBeLessThanOrEqual(25);
        for (const r of claims[i]!)
          expect(r).toMatchObject({ status: 'replaying', claimedBy: owner, leaseUntil: 70_000 });
      }
      expect(await claim('d', 10_000)).toEqual([]);
      for (const r of later) expect(await statusOf(r)).toBe('pending');
      expect(await f.store.deadLetters.countDeadLetters()).toEqual({ ...zeros, pending: 5, replaying: 60 });
    });

    it('claims at most the limit, oldest due first', async () => {
      const rows = await seed([failure(), failure(), failure()], retryAt(3_000));
      const early = await seedOne({}, retryAt(2_000));
      const first = await claim('r1', 10_000, 2);
      expect(first.length).toBe(2);
      expect(first.map((r) => r.id)).toContain(early.id);
      const rest = await claim('r2', 10_000, 10);
      expect([...first, ...rest].map((r) => r.id).sort((x, y) => x - y)).toEqual(
        [early, ...rows].map((r) => r.id).sort((x, y) => x - y),
      );
    });

    it('makes a row whose lease expired claimable by another owner, and the old owner loses it', async () => {
      const row = await seedOne();
      expect((await claim('a', 10_000, 10, 5_000)).map((r) => r.id)).toEqual([row.id]);
      expect(await claim('b', 14_999)).toEqual([]);
      const retaken = await claim('b', 15_000, 10, 5_000);
      expect(retaken.map((r) => r.id)).toEqual([row.id]);
      expect(retaken[0]).toMatchObject({ claimedBy: 'b', leaseUntil: 20_000, attempts: 1 });
      expect(await f.store.deadLetters.markResolved(row.id, 'a', 15_001)).toBe(false);
      expect(await f.store.deadLetters.markResolved(row.id, 'b', 15_002)).toBe(true);
      expect(await claim('c', 100_000)).toEqual([]);
    });

    it('resolves and reschedules only a replaying row held by the caller', async () => {
      const row = await seedOne();
      const decision: RetryDecision = { status: 'pending', nextRetryAt: 50_000 };
      const update = { id: row.id, attempts: 2, decision, error: 'again', now: 11_000 };
      expect(await f.store.deadLetters.markResolved(row.id, 'r1', 10_000)).toBe(false); // pending, not claimed
      expect(await f.store.deadLetters.reschedule({ ...update, owner: 'r1' })).toBe(false);
      await claim('r1');
      expect(await f.store.deadLetters.markResolved(row.id, 'intruder', 10_500)).toBe(false);
      expect(await f.store.deadLetters.reschedule({ ...update, owner: 'intruder' })).toBe(false);
      expect(await f.store.deadLetters.reschedule({ ...update, owner: 'r1' })).toBe(true);
      expect(await f.store.deadLetters.getDeadLetter(row.messageId, GROUP)).toMatchObject({
        status: 'pending',
        attempts: 2,
        nextRetryAt: 50_000,
        lastError: 'again',
        claimedBy: null,
        leaseUntil: null,
        updatedAt: 11_000,
      });
      expect(await f.store.deadLetters.reschedule({ ...update, owner: 'r1' })).toBe(false); // no longer replaying
      expect(await claim('r1', 49_999)).toEqual([]);
      expect((await claim('r1', 50_000)).map((r) => r.id)).toEqual([row.id]);
      expect(await f.store.deadLetters.reschedule({ ...update, owner: 'r1', attempts: 3, decision: dead() })).toBe(
        true,
      );
      expect(await f.store.deadLetters.getDeadLetter(row.messageId, GROUP)).toMatchObject({
        status: 'dead',
        nextRetryAt: null,
      });
      expect(await claim('r1', 10_000_000)).toEqual([]);
      expect(await f.store.deadLetters.markResolved(row.id, 'r1', 60_000)).toBe(false);

      const other = await seedOne();
      await claim('r2');
      expect(await f.store.deadLetters.markResolved(other.id, 'r2', 12_000)).toBe(true);
      expect(await f.store.deadLetters.getDeadLetter(other.messageId, GROUP)).toMatchObject({
        status: 'resolved',
        claimedBy: null,
        leaseUntil: null,
        nextRetryAt: null,
        updatedAt: 12_000,
      });
      expect(await f.store.deadLetters.markResolved(other.id, 'r2', 12_001)).toBe(false);
    });

    it('ignores only pending or dead rows, keeping the reason', async () => {
      const pending = await seedOne({}, retryAt(1_000_000));
      const deadRow = await seedOne({}, dead);
      const replaying = await seedOne();
      await claim('r1'); // leased until 15_000
      expect(await f.store.deadLetters.ignore(replaying.id, 'no', 12_000)).toBe(false); // a live replayer holds it
      expect(await f.store.deadLetters.ignore(pending.id, 'duplicate order', 20_000)).toBe(true);
      expect(await f.store.deadLetters.ignore(pending.id, 'again', 20_001)).toBe(false);
      expect(await f.store.deadLetters.ignore(deadRow.id, 'obsolete', 20_002)).toBe(true);
      expect(await f.store.deadLetters.getDeadLetter(pending.messageId, GROUP)).toMatchObject({
        status: 'ignored',
        ignoredReason: 'duplicate order',
        nextRetryAt: null,
        updatedAt: 20_000,
      });
      await f.store.deadLetters.markResolved(replaying.id, 'r1', 20_003);
      expect(await f.store.deadLetters.ignore(replaying.id, 'late', 20_004)).toBe(false); // resolved
      expect(await f.store.deadLetters.ignore(999_999, 'missing', 20_005)).toBe(false);
      expect(await claim('r2', 10_000_000)).toEqual([]);
    });

    it('counts rows in every status, for all groups or one', async () => {
      await seed([failure(), failure()], retryAt(1_000_000));
      const replaying = await seedOne();
      await claim('r1');
      const resolved = await seedOne();
      await claim('r2');
      await f.store.deadLetters.markResolved(resolved.id, 'r2', 11_000);
      const ignored = await seedOne({}, dead);
      await f.store.deadLetters.ignore(ignored.id, 'why not', 11_000);
      await seedOne({}, dead);
      await seedOne({ group: 'shipping' }, retryAt(1_000_000));
      expect(await statusOf(replaying)).toBe('replaying');
      expect(await f.store.deadLetters.countDeadLetters()).toEqual({
        pending: 3,
        replaying: 1,
        resolved: 1,
        ignored: 1,
        dead: 1,
      });
      expect(await f.store.deadLetters.countDeadLetters(GROUP)).toEqual({
        pending: 2,
        replaying: 1,
        resolved: 1,
        ignored: 1,
        dead: 1,
      });
      expect(await f.store.deadLetters.countDeadLetters('shipping')).toEqual({ ...zeros, pending: 1 });
      expect(await f.store.deadLetters.countDeadLetters('nobody')).toEqual(zeros);
    });

    it('purges only inbox rows older than the limit, in bounded batches', async () => {
      const ids = [1_000, 2_000, 3_000, 4_000, 5_000].map((at) => ({ id: randomUUID(), at }));
      await f.store.transaction(async (tx) => {
        for (const { id, at } of ids) await f.store.inbox.recordInbox(tx, id, GROUP, at);
      });
      expect(await f.store.inbox.purgeInbox(3_500, 2)).toBe(2);
      expect(await f.store.inbox.purgeInbox(3_500, 2)).toBe(1);
      expect(await f.store.inbox.purgeInbox(3_500, 2)).toBe(0);
      const left = await Promise.all(ids.map(({ id }) => f.store.inbox.inboxRecordedAt(id, GROUP)));
      expect(left).toEqual([undefined, undefined, undefined, 4_000, 5_000]);
    });

    it('purges only settled rows older than the cutoff, of every group, with their history, in bounded batches', async () => {
      const oldResolved = [await resolvedAt(11_000), await resolvedAt(11_500), await resolvedAt(11_900)];
      const newResolved = await resolvedAt(20_000); // at the cutoff: not older, kept
      const oldIgnored = [await ignoredAt(12_000), await ignoredAt(12_000, 'shipping')];
      const newIgnored = await ignoredAt(30_000);
      const pending = await seedOne({}, retryAt(1_000_000)); // last changed at 1_000, long before the cutoff
      const deadRow = await seedOne({}, dead);
      const replaying = await seedOne({}, retryAt(1_000));
      expect((await claim('r1', 10_000)).map((r) => r.id)).toEqual([replaying.id]);
      const purged = [...oldResolved, ...oldIgnored];
      const kept = [newResolved, newIgnored, pending, deadRow, replaying];
      const keptHistory = await historyOf(kept);
      for (const n of [...(await historyOf(purged)), ...keptHistory]) expect(n).toBeGreaterThan(0);

      expect(await purge(20_000, 3)).toBe(3);
      expect(await purge(20_000, 3)).toBe(2);
      expect(await purge(20_000, 3)).toBe(0);

      for (const row of purged)
        expect(await f.store.deadLetters.getDeadLetter(row.messageId, row.group)).toBeUndefined();
      expect(await historyOf(purged)).toEqual(purged.map(() => 0));
      expect(await Promise.all(kept.map(statusOf))).toEqual(['resolved', 'ignored', 'pending', 'dead', 'replaying']);
      expect(await historyOf(kept)).toEqual(keptHistory);
      expect(await f.store.deadLetters.countDeadLetters()).toEqual({
        pending: 1,
        replaying: 1,
        resolved: 1,
        ignored: 1,
        dead: 1,
      });
      // A later failure of a purged message starts a new row.
      const again = await f.store.transaction((tx) =>
        f.store.deadLetters.recordDeliveryFailure(tx, failure({ messageId: purged[0]!.messageId, now: 40_000 }), dead),
      );
      expect(again).toMatchObject({ attempts: 1, status: 'dead' });
    });

    it('keeps settled rows and their history when deleting the history fails', async () => {
      const row = await ignoredAt(12_000);
      const history = await historyOf([row]);
      const events = f.store.tables.deadLetterEvents;
      const name = events.split('.').pop()!.replace(/["`]/g, '');
      const quote = (n: string) => (f.store.dialect === 'mysql' ? `\`${n}\`` : `"${n}"`);
      await f.store.transaction((tx) => tx.query(`ALTER TABLE ${events} RENAME TO ${quote(`${name}_off`)}`));
      try {
        await expect(purge(20_000, 10)).rejects.toMatchObject({ code: 'SURETY_STORE_FAILED' });
      } finally {
        const away = events.replace(name, `${name}_off`);
        await f.store.transaction((tx) => tx.query(`ALTER TABLE ${away} RENAME TO ${quote(name)}`));
      }
      expect(await statusOf(row)).toBe('ignored');
      expect(await historyOf([row])).toEqual(history);
      expect(await purge(20_000, 10)).toBe(1);
    });

    it('passes over a settled row that an open transaction is reopening, without waiting', async () => {
      if (!f.concurrentWriters) return;
      const reopened = await resolvedAt(11_000);
      const other = await ignoredAt(11_000);
      const t = await f.begin();
      try {
        await f.store.deadLetters.recordDeliveryFailure(
          t.tx,
          failure({ messageId: reopened.messageId, now: 40_000 }),
          retryAt(50_000),
        );
        expect(await purge(20_000, 10)).toBe(1);
        await t.commit();
      } catch (err) {
        await t.rollback();
        throw err;
      }
      expect(await f.store.deadLetters.getDeadLetter(other.messageId, GROUP)).toBeUndefined();
      expect(await f.store.deadLetters.getDeadLetter(reopened.messageId, GROUP)).toMatchObject({
        status: 'pending',
        attempts: 1,
      });
      expect(await purge(20_000, 10)).toBe(0);
      expect((await historyOf([reopened]))[0]).toBeGreaterThan(0);
    });

    it('finds settled rows on their index', async () => {
      await seed(
        Array.from({ length: 300 }, () => failure()),
        dead,
      );
      const plan = await f.settledPurgePlan();
      expect(plan).toContain(f.settledPurgeIndex);
      // No full scan of a table or an index: the select walks the settled rows, the deletes go by id.
      expect(plan).not.toMatch(/Seq Scan|^SCAN |type: (ALL|index)\b/im);
    });

    it('runs the dead-letter claim on its indexes whatever the statistics say', async () => {
      await seed(
        Array.from({ length: 300 }, () => failure()),
        retryAt(1_000),
      );
      const plan = await f.deadLetterClaimPlan();
      for (const index of f.deadLetterClaimIndexes) expect(plan).toContain(index);
      expect(plan).not.toMatch(/Seq Scan|SCAN [a-z0-9_"]*dead_letters"?(?! USING)|type: ALL|\bALL\b.*dead_letters/i);
    });

    consumerTransactionCases(() => f);
    versionGuardCases(() => f);
  });
}

/** The ids of the migrations recorded as applied, in order. */
async function appliedMigrations(store: {
  tables: { migrations: string };
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}): Promise<number[]> {
  const { rows } = await store.transaction((tx) => tx.query(`SELECT id FROM ${store.tables.migrations} ORDER BY id`));
  return rows.map((r) => Number(r.id));
}
