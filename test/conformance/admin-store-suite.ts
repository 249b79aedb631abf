/**
 * Admin store conformance suite (lists, lineage, overview, actions with history, audit, jobs). Every
 * database adapter runs it:
 *
 *   runAdminStoreConformance('postgres', () => makePostgresFixture('pg_admin'));
 *
 * The fixture is the outbox suite's: a migrated store in its own schema or table prefix.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobRunnerStore } from '../../src/admin/jobs/job-runner.js';
import { failureRecord } from '../../src/consumer/batch-processor.js';
import type { AdminStore, DeadLetterEventKind, Page } from '../../src/ports/admin-store.js';
import type { DeadLetterRow, FailureRecord, RetryDecision } from '../../src/ports/consumer-store.js';
import type { NewOutboxRow, OutboxRow } from '../../src/ports/outbox-store.js';
import { wire } from '../support/consumer-env.js';
import { newRow } from '../support/rows.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import { failure } from './consumer-store-suite.js';
import type { StoreFixture } from './outbox-store-suite.js';

export interface AdminStoreFixture extends StoreFixture {
  readonly store: StoreFixture['store'];
}

const MIN = 60_000;
/** A lease that outlives every test's clock, the real one included: a replayer that is alive. */
const LIVE_LEASE_MS = 100 * 365 * 86_400_000;
const retryAt =
  (nextRetryAt: number): ((attempts: number) => RetryDecision) =>
  () => ({ status: 'pending', nextRetryAt });
const dead = (): RetryDecision => ({ status: 'dead', nextRetryAt: null });
const ctx = (now: number, actor = 'alice') => ({ actor, now });

export function runAdminStoreConformance(name: string, makeFixture: () => Promise<AdminStoreFixture>): void {
  describe(`admin store conformance: ${name}`, () => {
    let f: AdminStoreFixture;
    let store: AdminStoreFixture['store'];
    beforeEach(async () => {
      f = await makeFixture();
      store = f.store;
    });
    afterEach(async () => {
      await f?.teardown();
    });

    // ---- helpers -------------------------------------------------------------------------------

    const add = async (row: NewOutboxRow) => {
      await store.transaction((tx) => store.outbox.insert(tx, row, { ordered: false }));
      return row;
    };
    /** Claims exactly this row (by its own due time), as relay `owner`. */
    const claimRow = async (row: NewOutboxRow, owner = 'relay-1', now = 10_000_000): Promise<OutboxRow> => {
      const claimed = await store.outbox.claim({ owner, limit: 1_000, now, leaseMs: 60_000, ordered: false });
      const mine = claimed.find((r) => r.messageId === row.messageId)!;
      const others = claimed.filter((r) => r !== mine).map((r) => r.seq);
      await store.outbox.release(owner, others, now);
      return mine;
    };
    const sent = async (row: NewOutboxRow, at = 20_000) => {
      const r = await claimRow(row);
      await store.outbox.markSent([r.seq], at);
      return row;
    };
    const deadOutbox = async (row: NewOutboxRow, error = 'broker said no') => {
      const r = await claimRow(row);
      await store.outbox.recordFailure({
        seq: r.seq,
        owner: 'relay-1',
        attempts: 1,
        nextAttemptAt: 0,
        dead: true,
        error,
      });
      return row;
    };
    const seed = async (overrides: Partial<FailureRecord> = {}, decide = retryAt(1_000_000)) => {
      const record = failure(overrides);
      await store.transaction((tx) => store.deadLetters.recordDeliveryFailure(tx, record, decide));
      return (await store.deadLetters.getDeadLetter(record.messageId, record.group))!;
    };
    /** A row in `status`, alone in a group of its own so claims touch only it; `replaying` under a live lease. */
    const inState = async (status: DeadLetterRow['status']): Promise<DeadLetterRow> => {
      const group = `g-${randomUUID().slice(0, 8)}`;
      if (status === 'pending') return seed({ group });
      if (status === 'dead') return seed({ group }, dead);
      if (status === 'ignored') {
        const row = await seed({ group }, dead);
        await store.deadLetters.ignore(row.id, 'known', 2_000);
        return row;
      }
      const row = await seed({ group }, retryAt(1_000));
      await store.deadLetters.claimDue({ owner: 'replayer', group, now: 5_000, limit: 10, leaseMs: LIVE_LEASE_MS });
      if (status === 'resolved') await store.deadLetters.markResolved(row.id, 'replayer', 6_000);
      return row;
    };
    /** The row with its status as of `now` (default: the current time). */
    const byId = async (row: DeadLetterRow, now?: number) => (await store.admin.getDeadLetterById(row.id, now))!;
    const events = async (row: DeadLetterRow) => {
      const lineage = await store.admin.lineage(row.messageId);
      return lineage!.deadLetters.find((d) => d.id === row.id)!.history;
    };
    const kinds = async (row: DeadLetterRow): Promise<DeadLetterEventKind[]> => (await events(row)).map((e) => e.kind);
    const attemptsOf = async (messageId: string) => (await store.admin.lineage(messageId))!.outbox!.history;
    const bare = (qualified: string) => qualified.split('.').pop()!.replace(/["`]/g, '');
    const quote = (name: string) => (store.dialect === 'mysql' ? `\`${name}\`` : `"${name}"`);
    /** Renames a table away (and back), so statements on it fail for real. */
    const renameTable = async (qualified: string, away: boolean) => {
      const name = bare(qualified);
      const [from, to] = away ? [qualified, `${name}_off`] : [qualified.replace(name, `${name}_off`), name];
      await store.transaction((tx) => tx.query(`ALTER TABLE ${from} RENAME TO ${quote(to)}`));
    };

    // ---- schema ----------------------------------------------------------------------------------

    it('migrates idempotently, also concurrently, and reruns the admin migration over what it left', async () => {
      await Promise.all([store.migrate(), store.migrate()]);
      const applied = async () =>
        (await store.transaction((tx) => tx.query(`SELECT id FROM ${store.tables.migrations} ORDER BY id`))).rows.map(
          (r) => Number(r.id),
        );
      const all = await applied();
      expect(all).toEqual(all.map((_, i) => i + 1)); // each once, in order
      // A migrator that died after creating the admin tables and indexes (and later ones), before recording them.
      await store.transaction((tx) => tx.query(`DELETE FROM ${store.tables.migrations} WHERE id >= 3`));
      await Promise.all([store.migrate(), store.migrate()]);
      expect(await applied()).toEqual(all);
      expect(await store.heartbeats.relays()).toEqual([]);
    });

    // ---- lists -----------------------------------------------------------------------------------

    it('lists outbox rows newest first, by each filter', async () => {
      const a = await add(newRow({ type: 'order.created', key: 'k-a', createdAt: 1_000 }));
      const b = await sent(await add(newRow({ type: 'order.paid', key: 'k-b', createdAt: 2_000 })));
      const c = await deadOutbox(
        await add({ ...newRow({ type: 'order.created', key: 'k-c', createdAt: 3_000 }), topic: 'orders' }),
        'Broker said NO_ROUTE\n  at publish',
      );
      const d = await add(newRow({ type: 'order.shipped', key: 'k-a', createdAt: 4_000 }));
      const ids = async (filter: Parameters<AdminStore['listOutbox']>[0]) =>
        (await store.admin.listOutbox(filter, { limit: 50 })).items.map((r) => r.messageId);
      expect(await ids({})).toEqual([d, c, b, a].map((r) => r.messageId));
      expect(await ids({ status: ['pending'] })).toEqual([d, a].map((r) => r.messageId));
      expect(await ids({ status: ['sent', 'dead'] })).toEqual([c, b].map((r) => r.messageId));
      expect(await ids({ status: [] })).toEqual([]);
      expect(await ids({ type: 'order.created' })).toEqual([c, a].map((r) => r.messageId));
      expect(await ids({ key: 'k-a' })).toEqual([d, a].map((r) => r.messageId));
      expect(await ids({ topic: 'orders' })).toEqual([c.messageId]);
      expect(await ids({ error: 'no_route' })).toEqual([c.messageId]); // case-insensitive, `_` literal
      expect(await ids({ error: 'NO%ROUTE' })).toEqual([]); // `%` is no wildcard
      expect(await ids({ from: 2_000, to: 4_000 })).toEqual([c, b].map((r) => r.messageId));
      expect(await ids({ type: 'order.created', status: ['pending'], from: 500 })).toEqual([a.messageId]);
      const [row] = (await store.admin.listOutbox({ status: ['sent'] }, { limit: 1 })).items;
      expect(row).toMatchObject({ messageId: b.messageId, status: 'sent', sentAt: 20_000 });
    });

    it('lists dead letters newest first, by each filter', async () => {
      const a = await seed({ type: 'order.created', key: 'k-a', group: 'billing', now: 1_000, error: 'Timeout' });
      const b = await seed({ type: 'order.paid', key: 'k-b', group: 'shipping', now: 2_000, error: 'bad' }, dead);
      const c = await seed({ type: '', key: '', group: 'billing', now: 3_000, poison: true, error: 'undecodable' });
      const ids = async (filter: Parameters<AdminStore['listDeadLetters']>[0]) =>
        (await store.admin.listDeadLetters(filter, { limit: 50 })).items.map((r) => r.id);
      expect(await ids({})).toEqual([c.id, b.id, a.id]);
      expect(await ids({ status: ['dead'] })).toEqual([b.id]);
      expect(await ids({ status: ['pending', 'dead'] })).toEqual([c.id, b.id, a.id]);
      expect(await ids({ type: 'order.created' })).toEqual([a.id]);
      expect(await ids({ key: 'k-b' })).toEqual([b.id]);
      expect(await ids({ group: 'billing' })).toEqual([c.id, a.id]);
      expect(await ids({ error: 'TIMEOUT' })).toEqual([a.id]);
      expect(await ids({ poison: true })).toEqual([c.id]);
      expect(await ids({ poison: false })).toEqual([b.id, a.id]);
      expect(await ids({ from: 2_000 })).toEqual([c.id, b.id]);
      expect(await ids({ to: 2_000 })).toEqual([a.id]);
      expect(await store.admin.getDeadLetterById(b.id)).toEqual(b);
      expect(await store.admin.getDeadLetterById(999_999)).toBeUndefined();
    });

    it('matches the error filter ignoring case beyond ASCII, in lists and bulk jobs', async () => {
      const group = `g-${randomUUID().slice(0, 8)}`;
      const accented = await seed({ group, error: 'ÉCHEC total du paiement' }, dead);
      const greek = await seed({ group, error: 'ΣΦΑΛΜΑ στο δίκτυο' }, dead);
      const other = await seed({ group, error: 'timeout' }, dead);
      const ids = async (error: string) =>
        (await store.admin.listDeadLetters({ group, error }, { limit: 10 })).items.map((r) => r.id);
      expect(await ids('échec')).toEqual([accented.id]);
      expect(await ids('Échec TOTAL')).toEqual([accented.id]);
      expect(await ids('σφάλμα')).toEqual([]); // accents still count: only case is ignored
      expect(await ids('σφαλμα')).toEqual([greek.id]);
      expect(await ids('ΔΊΚΤΥΟ')).toEqual([greek.id]);
      const out = await deadOutbox(await add(newRow()), 'Ärger beim Senden');
      expect((await store.admin.listOutbox({ error: 'ärger' }, { limit: 10 })).items.map((r) => r.messageId)).toEqual([
        out.messageId,
      ]);
      // A job counts and acts on the same rows the list shows.
      const job = await newJob({ kind: 'dlq.ignore', filter: { group, error: 'échec' }, reason: 'known outage' });
      expect(job.total).toBe(1);
      await store.admin.claimJob('a', 2_000, 60_000);
      expect(await store.admin.runJobBatch(job.id, 'a', 10, 2_100, 60_000)).toMatchObject({
        status: 'done',
        changed: 1,
      });
      expect((await byId(accented)).status).toBe('ignored');
      expect((await byId(other)).status).toBe('dead');
    });

    it('pages by keyset, stable while rows are inserted concurrently', async () => {
      for (let i = 0; i < 25; i++) {
        await add(newRow());
        await seed();
      }
      /** Reads every page; from the second on, rows are inserted while each page is read. */
      const pageThrough = async <T>(list: (before?: number) => Promise<Page<T>>): Promise<T[]> => {
        const first = await list();
        const seen = [...first.items];
        for (let before = first.nextBefore; before !== null;) {
          const [page] = await Promise.all([list(before), add(newRow()), seed()]);
          expect(page.items.length).toBeLessThanOrEqual(7);
          seen.push(...page.items);
          before = page.nextBefore;
        }
        return seen;
      };
      const at = (before?: number) => ({ limit: 7, ...(before === undefined ? {} : { before }) });

      const outbox = (await store.admin.listOutbox({}, { limit: 1_000 })).items.map((r) => r.seq);
      expect(outbox).toHaveLength(25);
      expect([...outbox].sort((a, b) => b - a)).toEqual(outbox);
      const outboxSeen = await pageThrough((before) => store.admin.listOutbox({}, at(before)));
      expect(outboxSeen.map((r) => r.seq)).toEqual(outbox);

      const letters = (await store.admin.listDeadLetters({}, { limit: 1_000 })).items.map((r) => r.id);
      const lettersSeen = await pageThrough((before) => store.admin.listDeadLetters({}, at(before)));
      expect(lettersSeen.map((r) => r.id)).toEqual(letters);
      expect((await store.admin.listDeadLetters({}, { limit: 1_000 })).nextBefore).toBeNull();
    });

    it('refuses a page outside the allowed range, naming the field', async () => {
      for (const page of [{ limit: 0 }, { limit: 1_001 }, { limit: 1.5 }]) {
        await expect(store.admin.listOutbox({}, page)).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
      }
      await expect(store.admin.listDeadLetters({}, { limit: 10, before: 0 })).rejects.toThrow(/"before"/);
      await expect(store.admin.listAudit({}, { limit: -1 })).rejects.toThrow(/"limit"/);
      await expect(store.admin.listJobs({ limit: 5_000 })).rejects.toThrow(/"limit"/);
    });

    // ---- history written by the relay and consumer paths ----------------------------------------

    it('records each failed relay attempt, dead included, only for the claim owner', async () => {
      const row = await add(newRow());
      const claimed = await claimRow(row);
      const update = { seq: claimed.seq, attempts: 1, nextAttemptAt: 0, dead: false, error: 'nacked', now: 11_000 };
      expect(await store.outbox.recordFailure({ ...update, owner: 'intruder' })).toBe(false);
      expect(await store.outbox.recordFailure({ ...update, owner: 'relay-1' })).toBe(true);
      const again = await claimRow(row, 'relay-2', 12_000);
      expect(
        await store.outbox.recordFailure({
          ...update,
          seq: again.seq,
          owner: 'relay-2',
          attempts: 2,
          dead: true,
          now: 13_000,
        }),
      ).toBe(true);
      expect(await attemptsOf(row.messageId)).toEqual([
        { at: 11_000, attempt: 1, outcome: 'failed', error: 'nacked', actor: 'relay-1', confirmedAt: null },
        { at: 13_000, attempt: 2, outcome: 'dead', error: 'nacked', actor: 'relay-2', confirmedAt: null },
      ]);
    });

    it('records dead-letter history from the consumer and the replayer, only for changes made', async () => {
      const record = failure({ now: 1_000, error: 'first' });
      await store.transaction((tx) => store.deadLetters.recordDeliveryFailure(tx, record, retryAt(1_000)));
      const row = (await store.deadLetters.getDeadLetter(record.messageId, record.group))!;
      const claim = (now: number) =>
        store.deadLetters.claimDue({ owner: 'replayer', group: record.group, now, limit: 10, leaseMs: 1_000 });
      await claim(2_000);
      const reschedule = { id: row.id, attempts: 2, error: 'second', now: 3_000 };
      expect(await store.deadLetters.reschedule({ ...reschedule, owner: 'other', decision: retryAt(4_000)(2) })).toBe(
        false,
      );
      expect(
        await store.deadLetters.reschedule({ ...reschedule, owner: 'replayer', decision: retryAt(4_000)(2) }),
      ).toBe(true);
      await claim(4_000);
      expect(await store.deadLetters.markResolvedMany([row.id], 'replayer', 5_000)).toBe(1);
      expect(await store.deadLetters.markResolvedMany([row.id], 'replayer', 5_000)).toBe(0);
      expect(await store.deadLetters.markResolved(row.id, 'replayer', 5_000)).toBe(false);
      // Reopened by a new failure that goes dead at once, then replayed and rescheduled dead.
      await store.transaction((tx) =>
        store.deadLetters.recordDeliveryFailure(tx, { ...record, now: 6_000, error: 'perm' }, dead),
      );
      expect(await store.admin.requestReplay(row.id, ctx(7_000))).toBe(true);
      await claim(7_000);
      expect(
        await store.deadLetters.reschedule({
          ...reschedule,
          owner: 'replayer',
          attempts: 2,
          decision: dead(),
          now: 8_000,
        }),
      ).toBe(true);
      expect(await store.deadLetters.ignore(row.id, 'obsolete', 9_000)).toBe(true);
      expect(await store.deadLetters.ignore(row.id, 'again', 9_500)).toBe(false);
      expect(await events(row)).toEqual([
        { at: 1_000, kind: 'failed', attempt: 1, detail: 'first', actor: null },
        { at: 3_000, kind: 'replay_failed', attempt: 2, detail: 'second', actor: 'replayer' },
        { at: 5_000, kind: 'resolved', attempt: 2, detail: null, actor: 'replayer' },
        { at: 6_000, kind: 'dead', attempt: 1, detail: 'perm', actor: null },
        { at: 7_000, kind: 'replay_requested', attempt: 1, detail: null, actor: 'alice' },
        { at: 8_000, kind: 'dead', attempt: 2, detail: 'second', actor: 'replayer' },
        { at: 9_000, kind: 'ignored', attempt: 2, detail: 'obsolete', actor: null },
      ]);
    });

    it('records a resolution for each row of a batch, none for rows it did not change', async () => {
      const group = 'batch';
      const rows = await Promise.all([1, 2, 3].map(() => seed({ group }, retryAt(1_000))));
      await store.deadLetters.claimDue({ owner: 'r1', group, now: 2_000, limit: 2, leaseMs: 1_000 });
      const held = (await Promise.all(rows.map((r) => byId(r, 2_000))))
        .filter((r) => r.status === 'replaying')
        .map((r) => r.id);
      expect(await store.deadLetters.markResolvedMany([...rows.map((r) => r.id), 999_999], 'r1', 3_000)).toBe(2);
      for (const row of rows) {
        expect(await kinds(row)).toEqual(held.includes(row.id) ? ['failed', 'resolved'] : ['failed']);
      }
    });

    // ---- actions -----------------------------------------------------------------------------------

    it('replays on request only pending, dead or ignored rows, each with its history row', async () => {
      for (const status of ['pending', 'dead', 'ignored'] as const) {
        const row = await inState(status);
        expect(await store.admin.requestReplay(row.id, ctx(50_000, 'bob')), status).toBe(true);
        expect(await byId(row)).toMatchObject({
          status: 'pending',
          nextRetryAt: 50_000,
          ignoredReason: null,
          claimedBy: null,
          updatedAt: 50_000,
        });
        expect((await events(row)).at(-1)).toEqual({
          at: 50_000,
          kind: 'replay_requested',
          attempt: 1,
          detail: null,
          actor: 'bob',
        });
        const due = await store.deadLetters.claimDue({
          owner: 'x',
          group: row.group,
          now: 50_000,
          limit: 10,
          leaseMs: 1,
        });
        expect(due.map((r) => r.id)).toEqual([row.id]);
      }
      for (const status of ['replaying', 'resolved'] as const) {
        const row = await inState(status);
        const before = await kinds(row);
        expect(await store.admin.requestReplay(row.id, ctx(50_000)), status).toBe(false);
        expect((await byId(row)).status).toBe(status);
        expect(await kinds(row)).toEqual(before);
      }
      expect(await store.admin.requestReplay(999_999, ctx(50_000))).toBe(false);
    });

    it('ignores only pending or dead rows, keeping reason and actor', async () => {
      for (const status of ['pending', 'dead'] as const) {
        const row = await inState(status);
        expect(await store.admin.ignoreDeadLetter(row.id, 'duplicate order', ctx(60_000)), status).toBe(true);
        expect(await byId(row)).toMatchObject({
          status: 'ignored',
          ignoredReason: 'duplicate order',
          nextRetryAt: null,
        });
        expect((await events(row)).at(-1)).toMatchObject({
          kind: 'ignored',
          detail: 'duplicate order',
          actor: 'alice',
        });
      }
      for (const status of ['replaying', 'resolved', 'ignored'] as const) {
        const row = await inState(status);
        const before = await kinds(row);
        expect(await store.admin.ignoreDeadLetter(row.id, 'no', ctx(60_000)), status).toBe(false);
        expect((await byId(row)).status).toBe(status);
        expect(await kinds(row)).toEqual(before);
      }
      expect(await store.admin.ignoreDeadLetter(999_999, 'no', ctx(60_000))).toBe(false);
    });

    it('edits the body of a row not being replayed, keeping the previous one in the history', async () => {
      const row = await seed({ body: Buffer.from([0xff, 0x01]).toString('base64'), bodyEncoding: 'base64' }, dead);
      expect(await store.admin.editDeadLetter(row.id, '{"total":43}', ctx(70_000))).toBe(true);
      expect(await byId(row)).toMatchObject({ body: '{"total":43}', bodyEncoding: 'utf8', status: 'dead' });
      expect((await events(row)).at(-1)).toEqual({
        at: 70_000,
        kind: 'edited',
        attempt: 1,
        detail: row.body,
        actor: 'alice',
      });
      for (const status of ['pending', 'resolved', 'ignored'] as const) {
        expect(await store.admin.editDeadLetter((await inState(status)).id, '{}', ctx(70_000)), status).toBe(true);
      }
      const replaying = await inState('replaying');
      expect(await store.admin.editDeadLetter(replaying.id, '{}', ctx(70_000))).toBe(false);
      expect((await byId(replaying)).body).toBe(replaying.body);
      expect(await store.admin.editDeadLetter(999_999, '{}', ctx(70_000))).toBe(false);
    });

    it('resends an outbox row in any state as a new attempt with the same id', async () => {
      const pending = await add(newRow());
      const wasSent = await sent(await add(newRow()));
      const wasDead = await deadOutbox(await add(newRow()));
      const inFlight = await add(newRow());
      await claimRow(inFlight, 'relay-9', 10_000_000);
      for (const row of [pending, wasSent, wasDead, inFlight]) {
        const sentAt = (await store.outbox.get(row.messageId))!.sentAt;
        expect(sentAt === null).toBe(row !== wasSent);
        expect(await store.admin.resendOutbox(row.messageId, ctx(80_000, 'carol'))).toBe(true);
        expect(await store.outbox.get(row.messageId)).toMatchObject({
          messageId: row.messageId,
          status: 'pending',
          attempts: 0,
          nextAttemptAt: 80_000,
          claimedBy: null,
          sentAt: null,
        });
        expect((await attemptsOf(row.messageId)).at(-1)).toEqual({
          at: 80_000,
          attempt: 0,
          outcome: 'resent',
          error: null,
          actor: 'carol',
          // The confirm the resend replaces stays in the history.
          confirmedAt: sentAt,
        });
      }
      // Due at once for any relay, the one in flight included.
      const claimed = await store.outbox.claim({
        owner: 'relay-2',
        limit: 10,
        now: 80_000,
        leaseMs: 1_000,
        ordered: false,
      });
      expect(claimed.map((r) => r.messageId).sort()).toEqual(
        [pending, wasSent, wasDead, inFlight].map((r) => r.messageId).sort(),
      );
      expect(await store.admin.resendOutbox(randomUUID(), ctx(80_000))).toBe(false);
      expect(await store.admin.resendOutbox('not-a-message-id', ctx(80_000))).toBe(false);
    });

    // ---- lineage and overview ---------------------------------------------------------------------

    it('traces one message through the outbox, the inboxes and the dead letters', async () => {
      const row = await add(newRow({ createdAt: 1_000 }));
      const first = await claimRow(row, 'relay-1', 2_000);
      await store.outbox.recordFailure({
        seq: first.seq,
        owner: 'relay-1',
        attempts: 1,
        nextAttemptAt: 0,
        dead: false,
        error: 'nacked',
        now: 2_500,
      });
      await store.outbox.markSent([(await claimRow(row, 'relay-1', 3_000)).seq], 3_500);
      await store.transaction(async (tx) => {
        await store.inbox.recordInbox(tx, row.messageId, 'billing', 4_000);
        await store.inbox.recordInbox(tx, row.messageId, 'shipping', 4_100);
      });
      const letter = await seed({ messageId: row.messageId, group: 'audit', now: 4_200, error: 'down' });
      const lineage = (await store.admin.lineage(row.messageId))!;
      expect(lineage.messageId).toBe(row.messageId);
      expect(lineage.outbox).toMatchObject({
        messageId: row.messageId,
        createdAt: 1_000,
        status: 'sent',
        sentAt: 3_500,
      });
      expect(lineage.outbox!.history).toEqual([
        { at: 2_500, attempt: 1, outcome: 'failed', error: 'nacked', actor: 'relay-1', confirmedAt: null },
      ]);
      expect(lineage.inbox).toEqual([
        { group: 'billing', recordedAt: 4_000 },
        { group: 'shipping', recordedAt: 4_100 },
      ]);
      expect(lineage.deadLetters).toEqual([
        { ...letter, history: [{ at: 4_200, kind: 'failed', attempt: 1, detail: 'down', actor: null }] },
      ]);

      // A message another service produced: only the consumer side knows it, under any id.
      await store.transaction((tx) => store.inbox.recordInbox(tx, 'external-42', 'billing', 5_000));
      expect(await store.admin.lineage('external-42')).toEqual({
        messageId: 'external-42',
        outbox: null,
        inbox: [{ group: 'billing', recordedAt: 5_000 }],
        deadLetters: [],
      });
      expect(await store.admin.lineage(randomUUID())).toBeUndefined();
      expect(await store.admin.lineage('nobody')).toBeUndefined();
    });

    it('gives an overview: counts, expired leases, inbox size, throughput, error groups, relays', async () => {
      const now = 1_000 * MIN + 30_000; // 30 s into minute 1000
      await add(newRow({ createdAt: 100 }));
      await add(newRow({ createdAt: 200 }));
      await sent(await add(newRow()), 1_000 * MIN + 1);
      await sent(await add(newRow()), 1_000 * MIN + 2);
      await sent(await add(newRow()), 941 * MIN + 5); // the oldest minute shown
      await sent(await add(newRow()), 940 * MIN); // just outside the hour
      await deadOutbox(await add(newRow()));
      await store.transaction(async (tx) => {
        await store.inbox.recordInbox(tx, randomUUID(), 'billing', 999 * MIN + 10);
        await store.inbox.recordInbox(tx, randomUUID(), 'billing', 999 * MIN + 20);
        await store.inbox.recordInbox(tx, randomUUID(), 'shipping', 1_000 * MIN);
        await store.inbox.recordInbox(tx, randomUUID(), 'billing', 900 * MIN);
      });
      await seed({ type: 'order.created', group: 'billing', error: 'Timeout after 5 s\n  at call (x.js:1)', now: 300 });
      await seed(
        { type: 'order.created', group: 'billing', error: 'Timeout after 5 s\n  at other (y.js:2)', now: 200 },
        dead,
      );
      await seed({ type: 'order.paid', group: 'billing', error: 'Bad total' });
      const expiring = await seed({ group: 'lease' }, retryAt(1_000));
      await store.deadLetters.claimDue({ owner: 'gone', group: 'lease', now: 1_000, limit: 1, leaseMs: 1_000 });
      const live = await inState('replaying');
      await inState('resolved');
      await store.heartbeats.recordHeartbeat({
        relayId: 'relay-a',
        host: 'h',
        pid: 1,
        startedAt: 5,
        lastClaimedAt: now - 1,
        lastSeenAt: now,
      });

      const o = await store.admin.overview(now);
      expect(o.outbox).toEqual({ pending: 2, sent: 4, dead: 1, oldestPendingAt: 100 });
      // The row whose lease ran out (its replayer died) counts as pending; the live one as replaying.
      expect(o.deadLetters).toEqual({ pending: 3, replaying: 1, resolved: 1, ignored: 0, dead: 1 });
      expect(o.expiredLeases).toBe(1);
      expect(o.dueRetries).toEqual([
        { group: 'lease', count: 1, expiredLeases: 1, oldestDueAt: 2_000 },
        { group: 'billing', count: 2, expiredLeases: 0, oldestDueAt: 1_000_000 },
      ]);
      expect(o.inboxSize).toBe(4);
      expect(o.inboxSizeExact).toBe(true);
      expect(o.throughput).toHaveLength(60);
      expect(o.throughput[0]!.minute).toBe(941 * MIN);
      expect(o.throughput[59]!.minute).toBe(1_000 * MIN);
      const busy = o.throughput.filter((b) => b.sent > 0 || b.consumed > 0);
      expect(busy).toEqual([
        { minute: 941 * MIN, sent: 1, consumed: 0 },
        { minute: 999 * MIN, sent: 0, consumed: 2 },
        { minute: 1_000 * MIN, sent: 2, consumed: 1 },
      ]);
      expect(o.deadLetterGroups).toEqual([
        { type: 'order.created', group: 'billing', error: 'Timeout after 5 s', count: 2, oldestAt: 200 },
        { type: 'order.created', group: live.group, error: 'handler failed', count: 1, oldestAt: live.createdAt },
        { type: 'order.created', group: 'lease', error: 'handler failed', count: 1, oldestAt: expiring.createdAt },
        { type: 'order.paid', group: 'billing', error: 'Bad total', count: 1, oldestAt: 1_000 },
      ]);
      expect(o.relays).toEqual([
        { relayId: 'relay-a', host: 'h', pid: 1, startedAt: 5, lastClaimedAt: now - 1, lastSeenAt: now },
      ]);
      expect(o.stoppedRelays).toEqual([]);
    });

    it('keeps one heartbeat row per relay, updated in place, marked stopped on request', async () => {
      const beat = {
        relayId: 'relay-a',
        host: 'host-1',
        pid: 42,
        startedAt: 1_000,
        lastClaimedAt: null,
        lastSeenAt: 1_000,
      };
      await store.heartbeats.recordHeartbeat(beat);
      await store.heartbeats.recordHeartbeat({ ...beat, relayId: 'relay-b' });
      await store.heartbeats.recordHeartbeat({ ...beat, lastClaimedAt: 5_000, lastSeenAt: 6_000 });
      expect(await store.heartbeats.relays()).toEqual([
        { ...beat, lastClaimedAt: 5_000, lastSeenAt: 6_000 },
        { ...beat, relayId: 'relay-b' },
      ]);
      await store.heartbeats.recordRelayStopped('relay-a', 7_000);
      await store.heartbeats.recordRelayStopped('relay-unknown', 7_000);
      expect((await store.heartbeats.relays()).map((r) => r.relayId)).toEqual(['relay-b']);
      const stoppedA = { ...beat, lastClaimedAt: 5_000, lastSeenAt: 7_000, stoppedAt: 7_000 };
      expect((await store.admin.overview(8_000)).stoppedRelays).toEqual([stoppedA]);
      // Started again under the same id: running again.
      await store.heartbeats.recordHeartbeat({ ...beat, lastSeenAt: 9_000 });
      expect((await store.heartbeats.relays()).map((r) => r.relayId)).toEqual(['relay-a', 'relay-b']);
      expect((await store.admin.overview(9_000)).stoppedRelays).toEqual([]);
      // A stop drops rows that stopped more than a day before it, never the latest.
      await store.heartbeats.recordRelayStopped('relay-a', 10_000);
      await store.heartbeats.recordRelayStopped('relay-b', 10_000 + 86_400_001);
      expect((await store.admin.overview(0)).stoppedRelays.map((r) => r.relayId)).toEqual(['relay-b']);
    });

    // ---- audit -------------------------------------------------------------------------------------

    it('appends audit entries and lists them newest first, by each filter', async () => {
      const entry = {
        at: 1_000,
        actor: 'alice',
        role: 'operator',
        action: 'dlq.replay',
        target: 'dlq:1',
        reason: null,
        outcome: 'ok' as const,
        detail: null,
      };
      const a = await store.admin.appendAudit(entry);
      const b = await store.admin.appendAudit({
        ...entry,
        at: 2_000,
        action: 'dlq.ignore',
        reason: 'duplicate',
        detail: { warnings: ['inbox window passed'], n: 1 },
      });
      const c = await store.admin.appendAudit({
        ...entry,
        at: 3_000,
        actor: 'bob',
        target: 'dlq:2',
        outcome: 'refused',
      });
      expect(b).toBeGreaterThan(a);
      expect(c).toBeGreaterThan(b);
      const ids = async (filter: Parameters<AdminStore['listAudit']>[0]) =>
        (await store.admin.listAudit(filter, { limit: 10 })).items.map((e) => e.id);
      expect(await ids({})).toEqual([c, b, a]);
      expect(await ids({ actor: 'alice' })).toEqual([b, a]);
      expect(await ids({ action: 'dlq.replay' })).toEqual([c, a]);
      expect(await ids({ target: 'dlq:1' })).toEqual([b, a]);
      expect(await ids({ from: 2_000, to: 3_000 })).toEqual([b]);
      const page = await store.admin.listAudit({}, { limit: 2 });
      expect(page.items.map((e) => e.id)).toEqual([c, b]);
      expect(page.items[1]).toEqual({
        ...entry,
        id: b,
        at: 2_000,
        action: 'dlq.ignore',
        reason: 'duplicate',
        detail: { warnings: ['inbox window passed'], n: 1 },
      });
      const next = await store.admin.listAudit({}, { limit: 2, before: page.nextBefore! });
      expect(next).toEqual({ items: [{ ...entry, id: a }], nextBefore: null });
    });

    // ---- jobs --------------------------------------------------------------------------------------

    const newJob = (overrides: Partial<Parameters<AdminStore['createJob']>[0]> = {}) =>
      store.admin.createJob({
        kind: 'dlq.replay',
        filter: {},
        reason: null,
        actor: 'alice',
        ratePerSecond: 50,
        now: 1_000,
        ...overrides,
      });

    it('creates a job over the rows matching its filter, up to the highest id then', async () => {
      const rows = [await seed({}, dead), await seed({}, dead), await seed()];
      const job = await newJob({ filter: { status: ['dead'] }, reason: 'retry after fix' });
      expect(job).toMatchObject({
        kind: 'dlq.replay',
        filter: { status: ['dead'] },
        reason: 'retry after fix',
        actor: 'alice',
        status: 'running',
        total: 2,
        done: 0,
        changed: 0,
        cursor: 0,
        maxId: rows[1]!.id,
        ratePerSecond: 50,
        owner: null,
        leaseUntil: null,
        createdAt: 1_000,
        updatedAt: 1_000,
        error: null,
      });
      expect(await store.admin.getJob(job.id)).toEqual(job);
      const empty = await newJob({ filter: { group: 'nobody' } });
      expect(empty).toMatchObject({ total: 0, maxId: 0, status: 'done', owner: null });
      const page = await store.admin.listJobs({ limit: 1 });
      expect(page.items.map((j) => j.id)).toEqual([empty.id]);
      expect((await store.admin.listJobs({ limit: 1, before: page.nextBefore! })).items).toEqual([job]);
      expect(await store.admin.getJob(999_999)).toBeUndefined();
      await expect(newJob({ kind: 'dlq.delete' as never })).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
    });

    it('lets one owner at a time hold a job, and another take it once the lease runs out', async () => {
      await seed({}, dead);
      const job = await newJob();
      expect(await store.admin.claimJob('a', 2_000, 10_000)).toMatchObject({
        id: job.id,
        owner: 'a',
        leaseUntil: 12_000,
      });
      expect(await store.admin.claimJob('b', 11_999, 10_000)).toBeUndefined();
      expect(await store.admin.claimJob('a', 5_000, 10_000)).toMatchObject({ owner: 'a', leaseUntil: 15_000 }); // renews
      expect(await store.admin.claimJob('b', 15_000, 10_000)).toMatchObject({ owner: 'b', leaseUntil: 25_000 });
      expect(await store.admin.runJobBatch(job.id, 'a', 10, 15_001, 10_000)).toBeUndefined(); // lost it
      expect(await store.admin.runJobBatch(999_999, 'b', 10, 15_001, 10_000)).toBeUndefined();
      expect(await store.admin.cancelJob(job.id, 16_000)).toBe(true);
      expect(await store.admin.cancelJob(job.id, 16_001)).toBe(false);
      expect(await store.admin.claimJob('c', 100_000, 10_000)).toBeUndefined(); // cancelled jobs are not claimable
      // A cancelled job's batch acts on nothing and says so.
      expect(await store.admin.runJobBatch(job.id, 'b', 10, 17_000, 10_000)).toMatchObject({
        status: 'cancelled',
        done: 0,
      });
      const failing = await newJob();
      expect(await store.admin.failJob(failing.id, 'filter no longer parses', 18_000)).toBe(true);
      expect(await store.admin.getJob(failing.id)).toMatchObject({
        status: 'failed',
        error: 'filter no longer parses',
      });
      expect(await store.admin.failJob(failing.id, 'again', 18_001)).toBe(false);
    });

    it('fails a job for a runner only while that runner holds it', async () => {
      await seed({}, dead);
      const job = await newJob();
      const failJob = (owner: string, error: string, now: number) =>
        (store as JobRunnerStore).admin.failJob(job.id, error, now, owner);
      await store.admin.claimJob('a', 2_000, 1_000);
      expect(await store.admin.claimJob('b', 3_000, 1_000)).toMatchObject({ owner: 'b' }); // a's lease ran out
      // a's batches kept failing meanwhile: giving up must not end the job b is running.
      expect(await failJob('a', 'a gave up', 3_100)).toBe(false);
      expect(await store.admin.getJob(job.id)).toMatchObject({ status: 'running', owner: 'b', error: null });
      expect(await failJob('b', 'b gave up', 3_200)).toBe(true);
      expect(await store.admin.getJob(job.id)).toMatchObject({
        status: 'failed',
        error: 'b gave up',
        updatedAt: 3_200,
      });
    });

    it("renews the lease from the batch's commit, so a slow batch leaves its owner the whole lease", async () => {
      await seed({}, dead);
      const job = await newJob();
      await store.admin.claimJob('a', 2_000, 1_000);
      // Another transaction holds the job row (on SQLite, the database): the batch waits for it for real.
      const holder = await f.begin();
      const HELD_MS = 1_000;
      let batch: Promise<unknown>;
      try {
        if (store.dialect !== 'sqlite')
          await holder.tx.query(`SELECT id FROM ${store.tables.adminJobs} WHERE id = ${job.id} FOR UPDATE`);
        batch = store.admin.runJobBatch(job.id, 'a', 10, 2_100, 1_000);
        await new Promise((r) => setTimeout(r, HELD_MS)); // the slowness injected, not a synchronisation
      } finally {
        await holder.rollback();
      }
      expect(await batch).toMatchObject({ status: 'done', changed: 1 });
      const after = (await store.admin.getJob(job.id))!;
      expect(after.updatedAt).toBe(2_100);
      expect(after.leaseUntil).toBeGreaterThanOrEqual(2_100 + HELD_MS + 1_000);
    });

    it('claims only the named job when asked, and hands a released job over at once', async () => {
      await seed({}, dead);
      const older = await newJob();
      const mine = await newJob();
      expect(await store.admin.claimJob('cli', 2_000, 60_000, mine.id)).toMatchObject({ id: mine.id, owner: 'cli' });
      expect(await store.admin.releaseJob(mine.id, 'someone-else', 3_000)).toBe(false);
      expect(await store.admin.claimJob('b', 3_000, 60_000, mine.id)).toBeUndefined();
      expect(await store.admin.releaseJob(mine.id, 'cli', 3_000)).toBe(true);
      expect(await store.admin.claimJob('b', 3_001, 60_000, mine.id)).toMatchObject({ id: mine.id, owner: 'b' });
      expect(await store.admin.getJob(older.id)).toMatchObject({ owner: null });
    });

    it('works through a job in batches from its cursor, resumed by another owner, each row once', async () => {
      const rows = [];
      for (let i = 0; i < 12; i++) rows.push(await seed({}, i % 4 === 3 ? retryAt(1_000_000) : dead));
      const replaying = await inState('replaying'); // examined, not changed
      const job = await newJob({ filter: { status: ['pending', 'dead', 'replaying'] } });
      const later = await seed({}, dead); // after maxId: not part of the job
      expect(job.total).toBe(13);
      await store.admin.claimJob('a', 2_000, 1_000);
      const first = (await store.admin.runJobBatch(job.id, 'a', 5, 2_100, 1_000))!;
      expect(first).toMatchObject({ status: 'running', done: 5, changed: 5, cursor: rows[4]!.id });
      expect(first.leaseUntil).toBeGreaterThanOrEqual(3_100); // from its commit: a few ms later
      expect(await store.admin.getJob(job.id)).toEqual(first);
      // Owner a dies; b takes over after the lease, from the cursor.
      expect(await store.admin.claimJob('b', first.leaseUntil! - 1, 1_000)).toBeUndefined();
      expect(await store.admin.claimJob('b', first.leaseUntil!, 1_000)).toMatchObject({
        owner: 'b',
        cursor: rows[4]!.id,
      });
      const second = (await store.admin.runJobBatch(job.id, 'b', 5, 3_200, 1_000))!;
      expect(second).toMatchObject({ status: 'running', done: 10, changed: 10 });
      const third = (await store.admin.runJobBatch(job.id, 'b', 5, 3_300, 1_000))!;
      expect(third).toMatchObject({ status: 'done', done: 13, changed: 12, cursor: replaying.id });
      expect(await store.admin.runJobBatch(job.id, 'b', 5, 3_400, 1_000)).toMatchObject({ status: 'done', done: 13 });
      for (const row of rows) {
        expect(await byId(row)).toMatchObject({ status: 'pending', nextRetryAt: expect.any(Number) });
        const requested = (await events(row)).filter((e) => e.kind === 'replay_requested');
        expect(requested).toEqual([expect.objectContaining({ actor: `job:${job.id}` })]);
      }
      expect((await byId(replaying)).status).toBe('replaying');
      expect((await byId(later)).status).toBe('dead');
    });

    it('never acts on a row twice while two owners race for the job', async () => {
      const rows = [];
      for (let i = 0; i < 40; i++) rows.push(await seed({}, dead));
      const job = await newJob({ filter: { status: ['dead'] } });
      let clock = 10_000;
      const tick = () => ++clock;
      const worker = async (owner: string) => {
        for (let i = 0; i < 2_000; i++) {
          // Lease 0: the other owner may take the job between any two calls.
          const held = await store.admin.claimJob(owner, tick(), 0);
          if (!held) {
            if ((await store.admin.getJob(job.id))!.status !== 'running') return;
            continue;
          }
          const after = await store.admin.runJobBatch(job.id, owner, 3, tick(), 0);
          if (after?.status === 'done') return;
        }
      };
      await Promise.all([worker('a'), worker('b')]);
      expect(await store.admin.getJob(job.id)).toMatchObject({ status: 'done', total: 40, done: 40, changed: 40 });
      for (const row of rows) {
        expect((await kinds(row)).filter((k) => k === 'replay_requested')).toHaveLength(1);
      }
    });

    it('rolls a failing batch back whole: no row changed, cursor unmoved', async () => {
      const rows = [await seed({}, dead), await seed({}, dead), await seed({}, dead)];
      const job = await newJob();
      await store.admin.claimJob('a', 2_000, 60_000);
      // The history table disappears: the batch fails after updating rows, in its transaction.
      await renameTable(store.tables.deadLetterEvents, true);
      try {
        await expect(store.admin.runJobBatch(job.id, 'a', 10, 2_100, 60_000)).rejects.toMatchObject({
          code: 'SURETY_STORE_FAILED',
        });
      } finally {
        await renameTable(store.tables.deadLetterEvents, false);
      }
      for (const row of rows) expect((await byId(row)).status).toBe('dead');
      expect(await store.admin.getJob(job.id)).toMatchObject({ status: 'running', cursor: 0, done: 0, changed: 0 });
      expect(await store.admin.runJobBatch(job.id, 'a', 10, 2_200, 60_000)).toMatchObject({
        status: 'done',
        changed: 3,
      });
      for (const row of rows) expect(await kinds(row)).toEqual(['dead', 'replay_requested']);
    });

    it('replays in bulk pending and dead rows, ignored ones only when the filter names them', async () => {
      const group = `g-${randomUUID().slice(0, 8)}`;
      const pending = await seed({ group });
      const deadRow = await seed({ group }, dead);
      const ignored = await seed({ group }, dead);
      await store.deadLetters.ignore(ignored.id, 'customer cancelled', 2_000);
      const job = await newJob({ filter: { group } });
      expect(job).toMatchObject({ filter: { group, status: ['pending', 'dead'] }, total: 2 });
      await store.admin.claimJob('a', 3_000, 60_000);
      expect(await store.admin.runJobBatch(job.id, 'a', 10, 3_100, 60_000)).toMatchObject({
        status: 'done',
        changed: 2,
      });
      for (const row of [pending, deadRow]) expect((await byId(row)).status).toBe('pending');
      expect(await byId(ignored)).toMatchObject({ status: 'ignored', ignoredReason: 'customer cancelled' });

      // A job stored without a status (made before replay jobs named theirs) still leaves ignored rows alone.
      const old = await newJob({ filter: { group } });
      const unnamed = JSON.stringify({ group });
      await store.transaction((tx) =>
        tx.query(
          `UPDATE ${store.tables.adminJobs} SET filter = '${unnamed}', cursor_id = ${deadRow.id}, max_id = ${ignored.id} WHERE id = ${old.id}`,
        ),
      );
      await store.admin.claimJob('a', 4_000, 60_000);
      expect(await store.admin.runJobBatch(old.id, 'a', 100, 4_100, 60_000)).toMatchObject({
        status: 'done',
        done: 1,
        changed: 0,
      });
      expect(await byId(ignored)).toMatchObject({ status: 'ignored', ignoredReason: 'customer cancelled' });

      const named = await newJob({ filter: { group, status: ['ignored'] } });
      expect(named).toMatchObject({ total: 1 });
      await store.admin.claimJob('a', 5_000, 60_000);
      expect(await store.admin.runJobBatch(named.id, 'a', 10, 5_100, 60_000)).toMatchObject({
        status: 'done',
        changed: 1,
      });
      expect(await byId(ignored)).toMatchObject({ status: 'pending', ignoredReason: null });
    });

    it('creates a job that matches nothing as done, so no runner ever holds it', async () => {
      await seed({}, dead);
      const job = await newJob({ filter: { group: 'nobody' } });
      expect(job).toMatchObject({ status: 'done', total: 0, done: 0, owner: null });
      expect(await store.admin.claimJob('a', 2_000, 60_000, job.id)).toBeUndefined();
      expect(await store.admin.cancelJob(job.id, 2_100)).toBe(false);
    });

    it('skips dead letters a consumer holds instead of waiting for them: no deadlock, each row once', async () => {
      // SQLite has one writer at a time, so no batch ever runs beside a consumer's transaction.
      if (!f.concurrentWriters) return;
      const group = `g-${randomUUID().slice(0, 8)}`;
      const [a, b] = [failure({ group, now: 1_000 }), failure({ group, now: 1_000 })];
      await store.transaction(async (tx) => {
        for (const r of [a, b]) await store.deadLetters.recordDeliveryFailure(tx, r, dead);
      });
      const rowA = (await store.deadLetters.getDeadLetter(a.messageId, group))!;
      const rowB = (await store.deadLetters.getDeadLetter(b.messageId, group))!;
      expect(rowA.id).toBeLessThan(rowB.id);
      const job = await newJob({ filter: { group } });
      await store.admin.claimJob('runner', 2_000, 60_000);

      // A consumer records redelivery failures in message order, b then a, in one transaction, while
      // the batch works through rows in id order, a then b: waiting for b would close a cycle.
      const consumer = await f.begin();
      let settled = false;
      let batch: Promise<{ job?: unknown; error?: unknown }>;
      try {
        await store.deadLetters.recordDeliveryFailure(consumer.tx, { ...b, now: 3_000 }, dead);
        batch = store.admin
          .runJobBatch(job.id, 'runner', 10, 3_100, 60_000)
          .then(
            (j) => ({ job: j }),
            (error: unknown) => ({ error }),
          )
          .finally(() => (settled = true));
        // A batch that waits for b is still waiting at the deadline; the consumer then asks for a.
        await waitFor('the batch to finish without waiting', () => settled, 2_000).catch(() => undefined);
        await store.deadLetters.recordDeliveryFailure(consumer.tx, { ...a, now: 3_200 }, dead);
        await consumer.commit();
      } catch (err) {
        await consumer.rollback().catch(() => undefined);
        throw err;
      }
      expect(await batch).toEqual({
        job: expect.objectContaining({ status: 'running', done: 1, changed: 1, cursor: rowA.id }),
      });
      // b is free now: the next batch takes it up.
      expect(await store.admin.runJobBatch(job.id, 'runner', 10, 4_000, 60_000)).toMatchObject({
        status: 'done',
        total: 2,
        done: 2,
        changed: 2,
        cursor: rowB.id,
      });
      for (const row of [rowA, rowB]) {
        const requested = (await events(row)).filter((e) => e.kind === 'replay_requested');
        expect(requested).toEqual([expect.objectContaining({ actor: `job:${job.id}` })]);
      }
      expect((await byId(rowA)).attempts).toBe(2); // the consumer's failure was recorded too
    });

    it('ignores and resends in bulk, with the job as actor', async () => {
      const letters = [await seed({}, dead), await seed({}, dead)];
      const ignoreJob = await newJob({ kind: 'dlq.ignore', reason: 'bad batch of 5 May' });
      await store.admin.claimJob('a', 2_000, 60_000);
      expect(await store.admin.runJobBatch(ignoreJob.id, 'a', 10, 2_100, 60_000)).toMatchObject({
        status: 'done',
        changed: 2,
      });
      for (const row of letters) {
        expect(await byId(row)).toMatchObject({ status: 'ignored', ignoredReason: 'bad batch of 5 May' });
        expect((await events(row)).at(-1)).toMatchObject({
          kind: 'ignored',
          detail: 'bad batch of 5 May',
          actor: `job:${ignoreJob.id}`,
        });
      }
      const deadRows = [await deadOutbox(await add(newRow())), await deadOutbox(await add(newRow()))];
      const kept = await sent(await add(newRow()));
      const resend = await newJob({ kind: 'outbox.resend', filter: { status: ['dead'] } });
      expect(resend).toMatchObject({ total: 2 });
      expect((await store.admin.claimJob('a', 3_000, 60_000))!.id).toBe(resend.id);
      expect(await store.admin.runJobBatch(resend.id, 'a', 10, 3_100, 60_000)).toMatchObject({
        status: 'done',
        done: 2,
        changed: 2,
      });
      for (const row of deadRows) {
        expect(await store.outbox.get(row.messageId)).toMatchObject({
          status: 'pending',
          attempts: 0,
          nextAttemptAt: 3_100,
        });
        expect((await attemptsOf(row.messageId)).at(-1)).toMatchObject({
          outcome: 'resent',
          actor: `job:${resend.id}`,
        });
      }
      expect(await store.outbox.get(kept.messageId)).toMatchObject({ status: 'sent' });
    });

    // ---- a replayer that died ----------------------------------------------------------------------

    /** A dead letter a replayer can run (a real envelope), due long ago. */
    const replayable = async (group: string, key: string) => {
      const message = wire({ type: 'order.created', key, payload: { key } });
      const record = failureRecord({ message, topic: 'orders', replay: false }, group, 'downstream down', false, 1_000);
      await store.transaction((tx) => store.deadLetters.recordDeliveryFailure(tx, record, retryAt(1_000)));
      return (await store.deadLetters.getDeadLetter(record.messageId, group))!;
    };

    it("reads a killed replayer's rows as pending once its lease ends, and lets every action take them", async () => {
      const group = `g-${randomUUID().slice(0, 8)}`;
      const keys = ['one', 'two', 'three', 'bulk-replay', 'bulk-replay', 'bulk-ignore'];
      const rows: DeadLetterRow[] = [];
      for (const key of keys) rows.push(await replayable(group, key));
      const [one, two, three] = rows as [DeadLetterRow, DeadLetterRow, DeadLetterRow];
      // A replayer claims all six and is SIGKILLed replaying the first; no replayer is left.
      const child = spawnTs('support/replayer-process.ts', {
        ...f.childEnv,
        SURETY_GROUP: group,
        SURETY_LEASE_MS: '60000',
      });
      const end = await exited(child);
      expect(end.signal, end.stderr).toBe('SIGKILL');
      const stored = async (r: DeadLetterRow) => (await store.deadLetters.getDeadLetter(r.messageId, group))!;
      const held = await Promise.all(rows.map(stored));
      const owner = held[0]!.claimedBy!;
      const leaseEnd = held[0]!.leaseUntil!;
      expect(held.map((r) => [r.status, r.claimedBy, r.leaseUntil])).toEqual(
        rows.map(() => ['replaying', owner, leaseEnd]),
      );

      const newestFirst = rows.map((r) => r.id).reverse();
      const ids = async (filter: Parameters<AdminStore['listDeadLetters']>[0], now: number) =>
        (await store.admin.listDeadLetters({ group, ...filter }, { limit: 50 }, now)).items.map((r) => r.id);

      // Under the lease its claim holds: replaying to every reader, refused by every action.
      const during = leaseEnd - 1;
      expect(await ids({ status: ['replaying'] }, during)).toEqual(newestFirst);
      expect(await ids({ status: ['pending', 'dead'] }, during)).toEqual([]);
      expect((await store.admin.overview(during)).deadLetters).toMatchObject({ pending: 0, replaying: 6 });
      expect(await store.admin.requestReplay(one.id, ctx(during))).toBe(false);
      expect(await store.admin.ignoreDeadLetter(one.id, 'no', ctx(during))).toBe(false);
      expect(await store.admin.editDeadLetter(one.id, '{}', ctx(during))).toBe(false);
      expect(await newJob({ filter: { group }, now: during })).toMatchObject({ total: 0, status: 'done' });

      // Once it has ended: pending, due since then, with the expired claim kept for the record.
      const after = leaseEnd;
      expect(await ids({}, after)).toEqual(newestFirst);
      expect(await ids({ status: ['pending'] }, after)).toEqual(newestFirst);
      expect(await ids({ status: ['pending', 'dead'] }, after)).toEqual(newestFirst);
      expect(await ids({ status: ['replaying'] }, after)).toEqual([]);
      expect(await ids({ status: ['replaying', 'dead'] }, after)).toEqual([]);
      expect(await ids({ status: ['pending', 'replaying'] }, after)).toEqual(newestFirst);
      const read = { status: 'pending', nextRetryAt: leaseEnd, claimedBy: owner, leaseUntil: leaseEnd };
      expect(await byId(one, after)).toMatchObject(read);
      expect((await store.admin.lineage(one.messageId, after))!.deadLetters).toEqual([expect.objectContaining(read)]);
      const o = await store.admin.overview(after);
      expect(o.deadLetters).toMatchObject({ pending: 6, replaying: 0 });
      expect(o.expiredLeases).toBe(6);
      expect(o.dueRetries).toEqual([{ group, count: 6, expiredLeases: 6, oldestDueAt: leaseEnd }]);

      // Every operator action takes them, one by one or in bulk, and releases the dead claim.
      expect(await store.admin.requestReplay(one.id, ctx(after))).toBe(true);
      expect(await store.admin.ignoreDeadLetter(two.id, 'obsolete', ctx(after))).toBe(true);
      expect(await store.admin.editDeadLetter(three.id, '{"total":1}', ctx(after))).toBe(true);
      const bulkReplay = await newJob({ filter: { group, key: 'bulk-replay' }, now: after });
      const bulkIgnore = await newJob({
        kind: 'dlq.ignore',
        filter: { group, key: 'bulk-ignore' },
        reason: 'x',
        now: after,
      });
      expect([bulkReplay.total, bulkIgnore.total]).toEqual([2, 1]);
      for (const job of [bulkReplay, bulkIgnore]) {
        expect(await store.admin.claimJob('runner', after, 60_000, job.id)).toMatchObject({ id: job.id });
        expect(await store.admin.runJobBatch(job.id, 'runner', 10, after, 60_000)).toMatchObject({
          status: 'done',
          changed: job.total,
        });
      }
      const released = { claimedBy: null, leaseUntil: null };
      for (const r of [one, rows[3]!, rows[4]!]) {
        expect(await stored(r)).toMatchObject({ status: 'pending', nextRetryAt: after, ...released });
        expect((await kinds(r)).at(-1)).toBe('replay_requested');
      }
      for (const r of [two, rows[5]!]) expect(await stored(r)).toMatchObject({ status: 'ignored', ...released });
      expect(await stored(three)).toMatchObject({ status: 'pending', body: '{"total":1}', ...released });
      expect(await kinds(three)).toEqual(['failed', 'edited']);
      // Had the replayer only been slow, it could no longer settle a row an operator took.
      expect(
        await store.deadLetters.markResolvedMany(
          rows.map((r) => r.id),
          owner,
          after,
        ),
      ).toBe(0);

      // A row under a live lease is still refused, one by one and in bulk.
      const live = await inState('replaying');
      expect(await store.admin.requestReplay(live.id, ctx(after))).toBe(false);
      expect(await store.admin.ignoreDeadLetter(live.id, 'no', ctx(after))).toBe(false);
      expect(await store.admin.editDeadLetter(live.id, '{}', ctx(after))).toBe(false);
      expect(await newJob({ filter: { group: live.group }, now: after })).toMatchObject({ total: 0 });
      expect(await byId(live, after)).toMatchObject({ status: 'replaying', claimedBy: 'replayer' });
    });
  });
}
