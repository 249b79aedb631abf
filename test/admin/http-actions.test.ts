/**
 * Operator actions over HTTP on every database: replay, ignore with a reason, edit (off unless
 * enabled), resend, bulk jobs; their history rows, audit entries and inbox-window warnings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, type AdminServer } from '../../src/admin/index.js';
import { startAdminFixture, type AdminFixture } from '../support/admin-fixture.js';
import { ApiClient } from '../support/admin-http.js';
import { seedDeadLetters, seedOutbox, sendAllOutbox } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

const HOUR = 3_600_000;

for (const dialect of Object.keys(storeFixtures) as (keyof typeof storeFixtures)[]) {
  describe(`admin HTTP actions on ${dialect}`, () => {
    let fx: AdminFixture;
    let op: (method: string, path: string, body?: unknown) => ReturnType<ApiClient['call']>;
    /** A second server on the same database: editing allowed, a one-hour inbox window. */
    let lenient: AdminServer;
    let lenientApi: ApiClient;

    beforeAll(async () => {
      fx = await startAdminFixture(dialect);
      op = (method, path, body) => fx.api.call(method, path, { token: fx.tokens.operator, body });
      lenient = await startAdminServer({
        store: fx.store,
        tokens: [{ name: 'olga', role: 'operator', token: fx.tokens.operator }],
        allowEdit: true,
        inboxWindowMs: HOUR,
        consoleDir: false,
        jobs: { enabled: false },
        port: 0,
      });
      lenientApi = new ApiClient(lenient.url);
    });
    afterAll(async () => {
      await lenient?.close();
      await fx?.close();
    });

    const row = async (id: number) => (await fx.store.admin.getDeadLetterById(id))!;
    const audit = async (target: string) => (await fx.store.admin.listAudit({ target }, { limit: 50 })).items;

    it('replays a dead letter: due now, a replay_requested event by the operator, an audit entry with the reason', async () => {
      const group = uniqueName('g');
      const [dead] = await seedDeadLetters(fx.store, 1, { group, status: 'dead' });
      const res = await op('POST', `/api/dead-letters/${dead!.id}/replay`, { reason: 'downstream fixed' });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ changed: true, warnings: [] });
      const after = await row(dead!.id);
      expect(after.status).toBe('pending');
      expect(after.nextRetryAt).toBeLessThanOrEqual(Date.now());
      const detail = await op('GET', `/api/dead-letters/${dead!.id}`);
      expect(detail.body.history.map((e: { kind: string; actor: string | null }) => [e.kind, e.actor])).toEqual([
        ['dead', null],
        ['replay_requested', 'alice'],
      ]);
      expect(await audit(`dlq:${dead!.id}`)).toMatchObject([
        { actor: 'alice', role: 'operator', action: 'dlq.replay', reason: 'downstream fixed', outcome: 'ok' },
      ]);
    });

    it('answers 409 for a row whose state does not allow the action and 404 for a missing one, audited as noop', async () => {
      const group = uniqueName('g');
      const [a] = await seedDeadLetters(fx.store, 1, { group, status: 'pending', at: Date.now() - HOUR });
      // A replayer takes the row and resolves it.
      const claimed = await fx.store.deadLetters.claimDue({
        owner: 'r1',
        group,
        now: Date.now(),
        limit: 10,
        leaseMs: 60_000,
      });
      expect(claimed.map((r) => r.id)).toEqual([a!.id]);
      const busy = await op('POST', `/api/dead-letters/${a!.id}/replay`, {});
      expect(busy.status).toBe(409);
      expect(busy.body.error).toMatchObject({ code: 'SURETY_CONFLICT' });
      expect(busy.body.error.message).toMatch(/is replaying; only pending, dead or ignored rows can be replayed/);
      await fx.store.deadLetters.markResolved(a!.id, 'r1', Date.now());
      const ignore = await op('POST', `/api/dead-letters/${a!.id}/ignore`, { reason: 'late' });
      expect(ignore.status).toBe(409);
      expect(ignore.body.error.message).toMatch(/is resolved/);
      expect((await row(a!.id)).status).toBe('resolved');
      const missing = await op('POST', '/api/dead-letters/987654321/replay', {});
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('SURETY_NOT_FOUND');
      const entries = await audit(`dlq:${a!.id}`);
      expect(entries.map((e) => [e.action, e.outcome])).toEqual([
        ['dlq.ignore', 'noop'],
        ['dlq.replay', 'noop'],
      ]);
      expect(entries[0]!.detail).toMatchObject({ code: 'SURETY_CONFLICT' });
      expect((await audit('dlq:987654321'))[0]).toMatchObject({ outcome: 'noop' });
    });

    it('ignores a dead letter with its reason, and only once', async () => {
      const group = uniqueName('g');
      const [dead] = await seedDeadLetters(fx.store, 1, { group });
      const res = await op('POST', `/api/dead-letters/${dead!.id}/ignore`, { reason: '  customer cancelled  ' });
      expect(res.status, res.text).toBe(200);
      const after = await row(dead!.id);
      expect(after.status).toBe('ignored');
      expect(after.ignoredReason).toBe('customer cancelled');
      expect((await op('POST', `/api/dead-letters/${dead!.id}/ignore`, { reason: 'again' })).status).toBe(409);
      const list = await op('GET', `/api/audit?action=dlq.ignore&target=dlq:${dead!.id}`);
      expect(list.body.items).toMatchObject([
        { outcome: 'noop', reason: 'again' },
        { outcome: 'ok', reason: 'customer cancelled', actor: 'alice' },
      ]);
    });

    it('refuses an edit unless the server allows it; an allowed edit keeps the old body in the history and replays', async () => {
      const group = uniqueName('g');
      const [dead] = await seedDeadLetters(fx.store, 1, { group });
      const refused = await op('POST', `/api/dead-letters/${dead!.id}/edit`, { body: '{"j":99}', reason: 'typo' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toMatch(/editing dead letters is disabled/);
      expect((await row(dead!.id)).body).toBe(dead!.body);
      expect((await audit(`dlq:${dead!.id}`))[0]).toMatchObject({ action: 'dlq.edit', outcome: 'refused' });

      const edited = await lenientApi.call('POST', `/api/dead-letters/${dead!.id}/edit`, {
        token: fx.tokens.operator,
        body: { body: '{"j":99}', reason: 'fix the amount' },
      });
      expect(edited.status, edited.text).toBe(200);
      const after = await row(dead!.id);
      expect(after.body).toBe('{"j":99}');
      expect(after.status).toBe('pending');
      const history = (await fx.store.admin.lineage(dead!.messageId))!.deadLetters[0]!.history;
      expect(history.map((e) => e.kind)).toEqual(['dead', 'edited', 'replay_requested']);
      expect(history[1]).toMatchObject({ actor: 'olga', detail: dead!.body });
    });

    it('resends an outbox message that was already sent, with the same id, as a new attempt', async () => {
      const [messageId] = await seedOutbox(fx.store, 1);
      await sendAllOutbox(fx.store);
      expect((await fx.store.admin.lineage(messageId!))!.outbox!.status).toBe('sent');
      const res = await op('POST', `/api/outbox/${messageId}/resend`, { reason: 'consumer lost it' });
      expect(res.status, res.text).toBe(200);
      expect(res.body.changed).toBe(true);
      const outbox = (await op('GET', `/api/outbox/${messageId}`)).body;
      expect(outbox).toMatchObject({ messageId, status: 'pending', attempts: 0 });
      expect(outbox.history).toMatchObject([{ outcome: 'resent', actor: 'alice' }]);
      expect((await audit(`outbox:${messageId}`))[0]).toMatchObject({ action: 'outbox.resend', outcome: 'ok' });
      const missing = await op('POST', '/api/outbox/0194b7a0-0000-7000-8000-00000000beef/resend', {});
      expect(missing.status).toBe(404);
    });

    it('warns that the handler may run again when the inbox window has passed', async () => {
      const group = uniqueName('g');
      const now = Date.now();
      const [oldNoInbox, recent, oldRecentInbox, oldOldInbox] = [
        ...(await seedDeadLetters(fx.store, 1, { group, at: now - 2 * HOUR })),
        ...(await seedDeadLetters(fx.store, 1, { group: `${group}b`, at: now })),
        ...(await seedDeadLetters(fx.store, 1, { group: `${group}c`, at: now - 2 * HOUR })),
        ...(await seedDeadLetters(fx.store, 1, { group: `${group}d`, at: now - 2 * HOUR })),
      ];
      await fx.store.transaction(async (tx) => {
        await fx.store.inbox.recordInbox(tx, oldRecentInbox!.messageId, oldRecentInbox!.group, now - 60_000);
        await fx.store.inbox.recordInbox(tx, oldOldInbox!.messageId, oldOldInbox!.group, now - 3 * HOUR);
      });
      const replay = async (id: number) =>
        (await lenientApi.call('POST', `/api/dead-letters/${id}/replay`, { token: fx.tokens.operator })).body;
      expect((await replay(oldNoInbox!.id)).warnings).toEqual([
        expect.stringMatching(/older than the inbox window \(60 min\).*handler may run again/),
      ]);
      expect((await replay(recent!.id)).warnings).toEqual([]);
      expect((await replay(oldRecentInbox!.id)).warnings).toEqual([]);
      expect((await replay(oldOldInbox!.id)).warnings).toEqual([
        expect.stringMatching(/inbox record of group ".*d" is older than the inbox window.*handler may run again/),
      ]);
      // The server without a window gives no such warnings.
      expect((await op('POST', `/api/dead-letters/${oldNoInbox!.id}/replay`, {})).body.warnings).toEqual([]);
      // The warning is in the audit entry too.
      const entry = (await audit(`dlq:${oldNoInbox!.id}`)).find((e) => e.actor === 'olga');
      expect(entry!.detail!.warnings).toHaveLength(1);

      const [oldMsg] = await seedOutbox(fx.store, 1, now - 2 * HOUR);
      const [newMsg] = await seedOutbox(fx.store, 1, now);
      const resend = async (id: string) =>
        (await lenientApi.call('POST', `/api/outbox/${id}/resend`, { token: fx.tokens.operator })).body;
      expect((await resend(oldMsg!)).warnings).toEqual([expect.stringMatching(/will run their handler again/)]);
      expect((await resend(newMsg!)).warnings).toEqual([]);
    });

    it('runs a bulk job to completion with progress, and cancels another', async () => {
      const group = uniqueName('g');
      await seedDeadLetters(fx.store, 20, { group });
      const created = await op('POST', '/api/jobs', {
        kind: 'dlq.ignore',
        filter: { group, status: 'dead' },
        reason: 'bulk: order service retired',
        ratePerSecond: 1_000,
      });
      expect(created.status, created.text).toBe(202);
      expect(created.body.job).toMatchObject({ kind: 'dlq.ignore', total: 20, status: 'running', actor: 'alice' });
      const id = created.body.job.id as number;
      await waitFor(
        'the job to finish',
        async () => (await op('GET', `/api/jobs/${id}`)).body.status === 'done',
        20_000,
      );
      expect((await op('GET', `/api/jobs/${id}`)).body).toMatchObject({ done: 20, changed: 20 });
      const rows = (await fx.store.admin.listDeadLetters({ group }, { limit: 100 })).items;
      expect(rows.every((r) => r.status === 'ignored' && r.ignoredReason === 'bulk: order service retired')).toBe(true);
      expect((await audit(`job:${id}`))[0]).toMatchObject({ action: 'job.create', outcome: 'ok' });

      const slowGroup = uniqueName('g');
      await seedDeadLetters(fx.store, 30, { group: slowGroup });
      const slow = await op('POST', '/api/jobs', {
        kind: 'dlq.replay',
        filter: { group: slowGroup },
        ratePerSecond: 2,
      });
      const slowId = slow.body.job.id as number;
      await waitFor(
        'the slow job to start',
        async () => (await op('GET', `/api/jobs/${slowId}`)).body.done > 0,
        10_000,
      );
      const cancel = await op('POST', `/api/jobs/${slowId}/cancel`, { reason: 'wrong filter' });
      expect(cancel.status, cancel.text).toBe(200);
      const job = (await op('GET', `/api/jobs/${slowId}`)).body;
      expect(job.status).toBe('cancelled');
      expect(job.done).toBeLessThan(30);
      expect((await op('POST', `/api/jobs/${slowId}/cancel`, {})).status).toBe(409);
      const list = await op('GET', '/api/jobs?limit=2');
      expect(list.body.items.map((j: { id: number }) => j.id)).toEqual([slowId, id]);
    });

    it('acts on every row only with "all": true, replaying no ignored row unless named, and ends empty jobs at once', async () => {
      const group = uniqueName('g');
      const [deadRow, ignored] = await seedDeadLetters(fx.store, 2, { group, status: 'dead' });
      await fx.store.deadLetters.ignore(ignored!.id, 'customer cancelled', Date.now());
      const before = (await fx.store.admin.listJobs({ limit: 1 })).items[0]?.id ?? 0;
      const refused = await op('POST', '/api/jobs', { kind: 'dlq.replay', reason: 'no filter' });
      expect(refused.status, refused.text).toBe(400);
      expect((await fx.store.admin.listJobs({ limit: 1 })).items[0]?.id ?? 0).toBe(before);

      const all = await op('POST', '/api/jobs', { kind: 'dlq.replay', all: true, ratePerSecond: 10_000 });
      expect(all.status, all.text).toBe(202);
      expect(all.body.job.filter).toEqual({ status: ['pending', 'dead'] });
      const id = all.body.job.id as number;
      await waitFor(
        'the job to finish',
        async () => (await op('GET', `/api/jobs/${id}`)).body.status === 'done',
        20_000,
      );
      expect((await row(deadRow!.id)).status).toBe('pending');
      expect(await row(ignored!.id)).toMatchObject({ status: 'ignored', ignoredReason: 'customer cancelled' });

      const none = await op('POST', '/api/jobs', { kind: 'outbox.resend', filter: { key: uniqueName('nobody') } });
      expect(none.status, none.text).toBe(202);
      expect(none.body.job).toMatchObject({ status: 'done', total: 0, owner: null });
    });

    it('pages lists newest first without overlap, and shows lineage and the overview', async () => {
      const group = uniqueName('g');
      const seeded = await seedDeadLetters(fx.store, 5, { group, error: 'Timeout talking to billing' });
      const first = await op('GET', `/api/dead-letters?group=${group}&limit=2&error=timeout`);
      expect(first.body.items.map((r: { id: number }) => r.id)).toEqual([seeded[4]!.id, seeded[3]!.id]);
      const second = await op('GET', `/api/dead-letters?group=${group}&limit=3&before=${first.body.nextBefore}`);
      expect(second.body.items.map((r: { id: number }) => r.id)).toEqual([seeded[2]!.id, seeded[1]!.id, seeded[0]!.id]);
      const lineage = await op('GET', `/api/messages/${seeded[0]!.messageId}/lineage`);
      expect(lineage.body.deadLetters).toMatchObject([{ id: seeded[0]!.id, group, history: [{ kind: 'dead' }] }]);
      const overview = await op('GET', '/api/overview');
      expect(overview.body.deadLetters.dead).toBeGreaterThanOrEqual(5);
      expect(
        overview.body.deadLetterGroups.some(
          (g: { group: string; count: number }) => g.group === group && g.count === 5,
        ),
      ).toBe(true);
    });
  });
}
