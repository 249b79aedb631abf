/**
 * Admin store conformance, audit half: an action's `ok` audit entry is written in the action's own
 * transaction (never without the change, never the change without it), and edit-then-replay is one
 * transaction. Faults are real: the audit table renamed away, a trigger refusing the replay step.
 *
 *   runAdminAuditConformance('postgres', () => makePostgresFixture('pg_audit'));
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewAuditEntry } from '../../src/ports/admin-store.js';
import type { DeadLetterRow, RetryDecision } from '../../src/ports/consumer-store.js';
import { newRow } from '../support/rows.js';
import { withEventKindRefused, withTableRenamed } from '../support/table-faults.js';
import type { AdminStoreFixture } from './admin-store-suite.js';
import { failure } from './consumer-store-suite.js';

const dead = (): RetryDecision => ({ status: 'dead', nextRetryAt: null });
const STORE_FAILED = { code: 'SURETY_STORE_FAILED' };

export function runAdminAuditConformance(name: string, makeFixture: () => Promise<AdminStoreFixture>): void {
  describe(`admin audit conformance: ${name}`, () => {
    let f: AdminStoreFixture;
    let store: AdminStoreFixture['store'];
    let group: string;
    beforeEach(async () => {
      f = await makeFixture();
      store = f.store;
      group = `g-${randomUUID().slice(0, 8)}`;
    });
    afterEach(async () => {
      await f?.teardown();
    });

    const entry = (target: string, action = 'dlq.replay', at = 50_000): NewAuditEntry => ({
      at,
      actor: 'alice',
      role: 'operator',
      action,
      target,
      reason: 'audited',
      outcome: 'ok',
      detail: { n: 1 },
    });
    const ctx = (target: string, action?: string) => ({ actor: 'alice', now: 50_000, audit: entry(target, action) });
    const deadLetter = async (): Promise<DeadLetterRow> => {
      const record = failure({ group });
      await store.transaction((tx) => store.deadLetters.recordDeliveryFailure(tx, record, dead));
      return (await store.deadLetters.getDeadLetter(record.messageId, group))!;
    };
    const outboxRow = async () => {
      const row = newRow();
      await store.transaction((tx) => store.outbox.insert(tx, row, { ordered: false }));
      return row;
    };
    const newJob = () =>
      store.admin.createJob({
        kind: 'dlq.ignore',
        filter: { group, status: ['dead'] },
        reason: 'bulk',
        actor: 'alice',
        ratePerSecond: 50,
        now: 1_000,
      });
    /** The row and its history, to compare before and after. */
    const snapshot = async (row: DeadLetterRow) => ({
      row: await store.admin.getDeadLetterById(row.id),
      history: (await store.admin.lineage(row.messageId))!.deadLetters.find((d) => d.id === row.id)!.history,
    });
    const outboxSnapshot = async (messageId: string) => (await store.admin.lineage(messageId))!.outbox;
    const audited = async (target: string) => (await store.admin.listAudit({ target }, { limit: 10 })).items;
    const allAudit = async () => (await store.admin.listAudit({}, { limit: 100 })).items;

    it('writes the entry with each action that changes its row, and none when it changes nothing', async () => {
      const a = await deadLetter();
      expect(await store.admin.requestReplay(a.id, ctx(`dlq:${a.id}`))).toBe(true);
      expect(await audited(`dlq:${a.id}`)).toEqual([{ ...entry(`dlq:${a.id}`), id: expect.any(Number) }]);
      expect(await store.admin.requestReplay(999_999, ctx('dlq:999999'))).toBe(false);
      expect(await audited('dlq:999999')).toEqual([]);

      const b = await deadLetter();
      expect(await store.admin.ignoreDeadLetter(b.id, 'dup', ctx(`dlq:${b.id}`, 'dlq.ignore'))).toBe(true);
      expect(await store.admin.ignoreDeadLetter(b.id, 'dup', ctx(`dlq:${b.id}`, 'dlq.ignore'))).toBe(false);
      expect(await audited(`dlq:${b.id}`)).toMatchObject([{ action: 'dlq.ignore', outcome: 'ok' }]);

      const c = await deadLetter();
      expect(await store.admin.editDeadLetter(c.id, '{"total":1}', ctx(`dlq:${c.id}`, 'dlq.edit'))).toBe(true);
      expect(await audited(`dlq:${c.id}`)).toMatchObject([{ action: 'dlq.edit' }]);

      const o = await outboxRow();
      expect(await store.admin.resendOutbox(o.messageId, ctx(`outbox:${o.messageId}`, 'outbox.resend'))).toBe(true);
      expect(await audited(`outbox:${o.messageId}`)).toMatchObject([{ action: 'outbox.resend' }]);
      const missing = randomUUID();
      expect(await store.admin.resendOutbox(missing, ctx(`outbox:${missing}`, 'outbox.resend'))).toBe(false);
      expect(await audited(`outbox:${missing}`)).toEqual([]);

      await deadLetter();
      const job = await store.admin.createJob(
        { kind: 'dlq.replay', filter: { group }, reason: null, actor: 'alice', ratePerSecond: 50, now: 1_000 },
        (created) => ({ ...entry(`job:${created.id}`, 'job.create'), detail: { total: created.total } }),
      );
      expect(await audited(`job:${job.id}`)).toMatchObject([{ action: 'job.create', detail: { total: job.total } }]);
      expect(await store.admin.cancelJob(job.id, 60_000, entry(`job:${job.id}`, 'job.cancel'))).toBe(true);
      expect(await store.admin.cancelJob(job.id, 60_000, entry(`job:${job.id}`, 'job.cancel'))).toBe(false);
      expect((await audited(`job:${job.id}`)).map((e) => e.action)).toEqual(['job.cancel', 'job.create']);
    });

    it('rolls every action back when its audit entry cannot be written', async () => {
      const [a, b, c, d] = [await deadLetter(), await deadLetter(), await deadLetter(), await deadLetter()];
      const o = await outboxRow();
      const job = await newJob();
      const before = await Promise.all([a, b, c, d].map(snapshot));
      const outboxBefore = await outboxSnapshot(o.messageId);
      const jobsBefore = await store.admin.listJobs({ limit: 100 });

      await withTableRenamed(store, store.tables.audit, async () => {
        await expect(store.admin.requestReplay(a.id, ctx('t'))).rejects.toMatchObject(STORE_FAILED);
        await expect(store.admin.ignoreDeadLetter(b.id, 'dup', ctx('t'))).rejects.toMatchObject(STORE_FAILED);
        await expect(store.admin.editDeadLetter(c.id, '{"x":1}', ctx('t'))).rejects.toMatchObject(STORE_FAILED);
        await expect(store.admin.editDeadLetter(d.id, '{"x":1}', ctx('t'), { replay: true })).rejects.toMatchObject(
          STORE_FAILED,
        );
        await expect(store.admin.resendOutbox(o.messageId, ctx('t'))).rejects.toMatchObject(STORE_FAILED);
        await expect(
          store.admin.createJob(
            { kind: 'dlq.replay', filter: { group }, reason: null, actor: 'alice', ratePerSecond: 50, now: 2_000 },
            () => entry('job:new', 'job.create'),
          ),
        ).rejects.toMatchObject(STORE_FAILED);
        await expect(store.admin.cancelJob(job.id, 3_000, entry(`job:${job.id}`, 'job.cancel'))).rejects.toMatchObject(
          STORE_FAILED,
        );
      });

      expect(await Promise.all([a, b, c, d].map(snapshot))).toEqual(before);
      expect(await outboxSnapshot(o.messageId)).toEqual(outboxBefore);
      expect(await store.admin.listJobs({ limit: 100 })).toEqual(jobsBefore);
      expect(await store.admin.getJob(job.id)).toMatchObject({ status: 'running' });
      expect(await allAudit()).toEqual([]);
      // The same actions go through once the table is back.
      expect(await store.admin.requestReplay(a.id, ctx('t'))).toBe(true);
      expect(await store.admin.cancelJob(job.id, 3_000, entry(`job:${job.id}`, 'job.cancel'))).toBe(true);
      expect(await allAudit()).toHaveLength(2);
    });

    it('edits and replays in one transaction: both happen, or neither', async () => {
      const row = await deadLetter();
      const edited = await store.admin.editDeadLetter(row.id, '{"total":43}', ctx(`dlq:${row.id}`, 'dlq.edit'), {
        replay: true,
      });
      expect(edited).toBe(true);
      const after = await snapshot(row);
      expect(after.row).toMatchObject({ body: '{"total":43}', status: 'pending', nextRetryAt: 50_000 });
      expect(after.history.map((e) => [e.kind, e.actor])).toEqual([
        ['dead', null],
        ['edited', 'alice'],
        ['replay_requested', 'alice'],
      ]);
      expect(await audited(`dlq:${row.id}`)).toHaveLength(1);

      // A resolved row may be edited, but not replayed: with replay, it is left as it was.
      const resolved = await deadLetter();
      await store.admin.requestReplay(resolved.id, { actor: 'alice', now: 2_000 });
      await store.deadLetters.claimDue({ owner: 'replayer', group, now: 2_000, limit: 10, leaseMs: 10_000 });
      await store.deadLetters.markResolved(resolved.id, 'replayer', 3_000);
      const resolvedBefore = await snapshot(resolved);
      expect(resolvedBefore.row!.status).toBe('resolved');
      expect(await store.admin.editDeadLetter(resolved.id, '{}', ctx(`dlq:${resolved.id}`), { replay: true })).toBe(
        false,
      );
      expect(await snapshot(resolved)).toEqual(resolvedBefore);
      expect(await audited(`dlq:${resolved.id}`)).toEqual([]);
    });

    it('takes the edit back when the replay step fails', async () => {
      const row = await deadLetter();
      const control = await deadLetter();
      const before = await snapshot(row);
      await withEventKindRefused(store, 'replay_requested', async () => {
        // The fault hits the replay step only: an edit alone still goes through.
        expect(await store.admin.editDeadLetter(control.id, '{"ok":1}', { actor: 'alice', now: 50_000 })).toBe(true);
        await expect(
          store.admin.editDeadLetter(row.id, '{"total":43}', ctx(`dlq:${row.id}`, 'dlq.edit'), { replay: true }),
        ).rejects.toMatchObject(STORE_FAILED);
      });
      expect(await snapshot(row)).toEqual(before);
      expect((await store.admin.getDeadLetterById(control.id))!.body).toBe('{"ok":1}');
      expect(await audited(`dlq:${row.id}`)).toEqual([]);
    });
  });
}
