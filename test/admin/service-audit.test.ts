/**
 * The admin service's audit on every database: an action's `ok` entry is written in the action's
 * transaction (an entry that cannot be written undoes the action), edit and replay are one
 * transaction, and a failed action's entry keeps a code and a generic message, the log the error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminService } from '../../src/admin/index.js';
import type { DeadLetterRow } from '../../src/ports/consumer-store.js';
import { capturingLogger } from '../support/admin-http.js';
import { seedDeadLetters, seedOutbox, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { withEventKindRefused, withTableRenamed } from '../support/table-faults.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';

const operator = { name: 'cli:root', role: 'operator' } as const;
const STORE_FAILED = { code: 'SURETY_STORE_FAILED' };
const GENERIC = { code: 'SURETY_STORE_FAILED', error: 'the database failed; see the server log' };

for (const dialect of Object.keys(storeFixtures) as (keyof typeof storeFixtures)[]) {
  describe(`AdminService audit on ${dialect}`, () => {
    let f: StoreFixture;
    let store: AdminTestStore;
    let service: AdminService;
    let lines: string[];

    beforeAll(async () => {
      f = await storeFixtures[dialect](`svc_audit_${dialect}`);
      store = f.store as AdminTestStore;
      const captured = capturingLogger();
      lines = captured.lines;
      service = new AdminService({ store, allowEdit: true, logger: captured.logger });
    });
    afterAll(async () => f?.teardown());

    const audited = async (target: string) => (await store.admin.listAudit({ target }, { limit: 50 })).items;
    const snapshot = async (row: DeadLetterRow) => ({
      row: await store.admin.getDeadLetterById(row.id),
      history: (await store.admin.lineage(row.messageId))!.deadLetters.find((d) => d.id === row.id)!.history,
    });
    const logged = (text: string) => lines.filter((l) => l.includes(text)).map((l) => JSON.parse(l) as object);

    it('undoes an action whose audit entry cannot be written, and reports the failure', async () => {
      const group = uniqueName('g');
      const [a, b, c] = await seedDeadLetters(store, 3, { group });
      const [messageId] = await seedOutbox(store, 1);
      const { job } = await service.createJob(operator, { kind: 'dlq.ignore', filter: { group }, reason: 'bulk' });
      const before = await Promise.all([a!, b!, c!].map(snapshot));
      const outboxBefore = (await store.admin.lineage(messageId!))!.outbox;
      const jobsBefore = await store.admin.listJobs({ limit: 100 });
      const auditBefore = (await store.admin.listAudit({}, { limit: 500 })).items;

      await withTableRenamed(store, store.tables.audit, async () => {
        await expect(service.replay(a!.id, operator, 'try')).rejects.toMatchObject(STORE_FAILED);
        await expect(service.ignore(b!.id, operator, 'dup')).rejects.toMatchObject(STORE_FAILED);
        await expect(service.edit(c!.id, operator, '{"fixed":true}', 'typo')).rejects.toMatchObject(STORE_FAILED);
        await expect(service.resend(messageId!, operator)).rejects.toMatchObject(STORE_FAILED);
        await expect(
          service.createJob(operator, { kind: 'dlq.replay', filter: { group }, reason: null }),
        ).rejects.toMatchObject(STORE_FAILED);
        await expect(service.cancelJob(job.id, operator)).rejects.toMatchObject(STORE_FAILED);
      });

      expect(await Promise.all([a!, b!, c!].map(snapshot))).toEqual(before);
      expect((await store.admin.lineage(messageId!))!.outbox).toEqual(outboxBefore);
      expect(await store.admin.listJobs({ limit: 100 })).toEqual(jobsBefore);
      expect((await store.admin.listAudit({}, { limit: 500 })).items).toEqual(auditBefore);
      // Neither the action nor its failure could be recorded: the log says so.
      expect(logged('audit entry not written')).toHaveLength(6);

      // Once the table is back, the same action goes through with its entry.
      expect(await service.replay(a!.id, operator, 'try again')).toEqual({ changed: true, warnings: [] });
      expect((await store.admin.getDeadLetterById(a!.id))!.status).toBe('pending');
      expect(await audited(`dlq:${a!.id}`)).toMatchObject([
        { outcome: 'ok', reason: 'try again', detail: { messageId: a!.messageId, group } },
      ]);
    });

    it('edits and replays in one transaction: a replay step that fails leaves the body unedited', async () => {
      const [row] = await seedDeadLetters(store, 1, { group: uniqueName('g') });
      const before = await snapshot(row!);
      await withEventKindRefused(store, 'replay_requested', async () => {
        await expect(service.edit(row!.id, operator, '{"fixed":true}', 'typo')).rejects.toMatchObject(STORE_FAILED);
      });
      expect(await snapshot(row!)).toEqual(before);
      expect(await audited(`dlq:${row!.id}`)).toMatchObject([
        { action: 'dlq.edit', outcome: 'failed', detail: GENERIC },
      ]);

      expect((await service.edit(row!.id, operator, '{"fixed":true}', 'typo')).changed).toBe(true);
      const after = await snapshot(row!);
      expect(after.row).toMatchObject({ body: '{"fixed":true}', status: 'pending' });
      expect(after.history.map((e) => e.kind)).toEqual(['dead', 'edited', 'replay_requested']);
      expect((await audited(`dlq:${row!.id}`))[0]).toMatchObject({ outcome: 'ok', detail: { bodyChars: 14 } });
    });

    it("keeps a stable code and a generic message in a failed action's entry, and the error in the log", async () => {
      const [row] = await seedDeadLetters(store, 1, { group: uniqueName('g') });
      const events = store.tables.deadLetterEvents;
      const table = events.split('.').pop()!.replace(/["`]/g, '');
      await withTableRenamed(store, events, async () => {
        await expect(service.replay(row!.id, operator, 'try')).rejects.toMatchObject(STORE_FAILED);
      });
      const [entry] = await audited(`dlq:${row!.id}`);
      expect(entry).toMatchObject({ action: 'dlq.replay', outcome: 'failed' });
      expect(entry!.detail).toEqual(GENERIC);
      const failures = logged('admin action failed');
      expect(failures.at(-1)).toMatchObject({ action: 'dlq.replay', target: `dlq:${row!.id}` });
      expect(JSON.stringify(failures.at(-1))).toContain(table);
    });
  });
}
