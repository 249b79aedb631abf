/** The admin service as the CLI uses it (no HTTP): role checks, validation, audit, options. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminService, InvalidInputError } from '../../src/admin/index.js';
import type { AdminJob } from '../../src/ports/admin-store.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';

const operator = { name: 'cli:root', role: 'operator' } as const;
const viewer = { name: 'cli:guest', role: 'viewer' } as const;

describe('AdminService (SQLite)', () => {
  let f: StoreFixture;
  let store: AdminTestStore;
  let service: AdminService;
  const created: AdminJob[] = [];

  beforeAll(async () => {
    f = await storeFixtures.sqlite('admin_service');
    store = f.store as AdminTestStore;
    service = new AdminService({ store, onJobCreated: (job) => created.push(job) });
  });
  afterAll(async () => f?.teardown());

  const audit = async () => (await store.admin.listAudit({}, { limit: 500 })).items;

  it('validates its options once, naming the bad one', () => {
    expect(() => new AdminService({ store: {} as never })).toThrow(/invalid option "admin.store"/);
    expect(() => new AdminService({ store, inboxWindowMs: -5 })).toThrow(/invalid option "admin.inboxWindowMs"/);
    expect(() => new AdminService({ store, allowEdit: 'yes' as never })).toThrow(/"admin.allowEdit"/);
  });

  it('refuses malformed input with issues naming each field, before any audit or change', async () => {
    const before = (await audit()).length;
    const cases: [() => Promise<unknown>, string, RegExp][] = [
      [() => service.replay(0, operator), 'id', /at least 1/],
      [() => service.replay(1.5, operator), 'id', /integer/],
      [() => service.ignore(1, operator, ' '), 'reason', /is required/],
      [() => service.edit(1, operator, '', 'x'), 'body', /must not be empty/],
      [() => service.resend('nope', operator), 'messageId', /UUID/],
      [() => service.replay(1, { name: '', role: 'operator' }), 'actor.name', /must not be empty/],
      [() => service.replay(1, { name: 'x', role: 'admin' as never }), 'actor.role', /viewer or operator/],
      [() => service.listDeadLetters({ status: 'open' }), 'filter.status', /"open" is not a status/],
      [() => service.listDeadLetters({}, { limit: 1_000 }), 'page.limit', /at most 500/],
      [() => service.listOutbox({ from: '2025-13-01' }), 'filter.from', /ISO 8601/],
      [() => service.listAudit({ from: 10, to: 5 }), 'filter.to', /after "from"/],
      [() => service.createJob(operator, { kind: 'dlq.ignore', filter: {} } as never), 'reason', /is required/],
      [() => service.createJob(operator, { kind: 'dlq.replay', ratePerSecond: 0.5 }), 'ratePerSecond', /at least 1/],
    ];
    for (const [call, path, message] of cases) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, path).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).code).toBe('SURETY_INVALID_INPUT');
      expect((err as InvalidInputError).issues[0]).toMatchObject({ path });
      expect((err as InvalidInputError).message).toMatch(message);
    }
    expect((await audit()).length).toBe(before);
  });

  it("audits a viewer's refused action and leaves the row alone", async () => {
    const [row] = await seedDeadLetters(store, 1, { group: uniqueName('g') });
    await expect(service.ignore(row!.id, viewer, 'not allowed')).rejects.toMatchObject({ code: 'SURETY_FORBIDDEN' });
    expect((await store.admin.getDeadLetterById(row!.id))!.status).toBe('dead');
    expect((await audit())[0]).toMatchObject({
      actor: 'cli:guest',
      role: 'viewer',
      action: 'dlq.ignore',
      target: `dlq:${row!.id}`,
      reason: 'not allowed',
      outcome: 'refused',
    });
  });

  it('audits a failed action when the store fails, and rethrows', async () => {
    const [row] = await seedDeadLetters(store, 1, { group: uniqueName('g') });
    // Break the events table for real: the replay's transaction cannot write its history row.
    const events = store.tables.deadLetterEvents;
    await store.transaction((tx) => tx.query(`ALTER TABLE ${events} RENAME TO broken_events`));
    try {
      await expect(service.replay(row!.id, operator, 'try')).rejects.toThrow(/broken|events|no such table/i);
    } finally {
      await store.transaction((tx) => tx.query(`ALTER TABLE broken_events RENAME TO ${events.replace(/.*\./, '')}`));
    }
    expect((await store.admin.getDeadLetterById(row!.id))!.status).toBe('dead');
    expect((await audit())[0]).toMatchObject({ action: 'dlq.replay', outcome: 'failed' });
  });

  it('creates a job, tells the runner, and warns when nothing matches', async () => {
    const group = uniqueName('g');
    await seedDeadLetters(store, 3, { group });
    const res = await service.createJob(operator, { kind: 'dlq.replay', filter: { group, status: 'dead,pending' } });
    expect(res.job).toMatchObject({ total: 3, ratePerSecond: 50, filter: { group, status: ['dead', 'pending'] } });
    expect(created.at(-1)!.id).toBe(res.job.id);
    const empty = await service.createJob(operator, { kind: 'dlq.replay', filter: { group: 'nobody' } });
    expect(empty.warnings).toContain('no row matches the filter');
    await expect(service.getJob(987_654)).rejects.toMatchObject({ code: 'SURETY_NOT_FOUND' });
    expect((await service.cancelJob(res.job.id, operator)).changed).toBe(true);
    await expect(service.cancelJob(res.job.id, operator)).rejects.toMatchObject({ code: 'SURETY_CONFLICT' });
  });
});
