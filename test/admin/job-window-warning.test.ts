/**
 * A bulk replay or resend warns that handlers may run again only when some row it matches is near
 * or past the inbox window (older than the window less 10%), and never when it matches nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminService } from '../../src/admin/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { newRow } from '../support/rows.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';

const operator = { name: 'cli:root', role: 'operator' } as const;
const HOUR = 3_600_000;
const WARNING = /older than the inbox window \(60 min\), or nearly: .*handler may run again/;

describe('inbox-window warning of bulk jobs (PostgreSQL)', () => {
  let f: StoreFixture;
  let store: AdminTestStore;
  let service: AdminService;

  beforeAll(async () => {
    f = await storeFixtures.postgres('job_window');
    store = f.store as AdminTestStore;
    service = new AdminService({ store, inboxWindowMs: HOUR, logger: null });
  });
  afterAll(async () => f?.teardown());

  const replay = (group: string) => service.createJob(operator, { kind: 'dlq.replay', filter: { group } });

  it('no warning for dead letters minutes old', async () => {
    const group = uniqueName('g');
    await seedDeadLetters(store, 3, { group, at: Date.now() - 5 * 60_000 });
    const res = await replay(group);
    expect(res.job.total).toBe(3);
    expect(res.warnings).toEqual([]);
  });

  it('only "no row matches" when nothing matches', async () => {
    const res = await replay(uniqueName('nobody'));
    expect(res.warnings).toEqual(['no row matches the filter']);
  });

  it('warns when one matching row is past the window, or within 10% of it', async () => {
    for (const age of [2 * HOUR, 0.95 * HOUR]) {
      const group = uniqueName('g');
      await seedDeadLetters(store, 2, { group, at: Date.now() - 60_000 });
      await seedDeadLetters(store, 1, { group, at: Date.now() - age });
      const res = await replay(group);
      expect(res.warnings).toEqual([expect.stringMatching(WARNING)]);
    }
  });

  it('a replay without a status ignores old rows it does not act on (ignored ones)', async () => {
    const group = uniqueName('g');
    const [old] = await seedDeadLetters(store, 1, { group, at: Date.now() - 2 * HOUR });
    await service.ignore(old!.id, operator, 'not ours');
    await seedDeadLetters(store, 1, { group, at: Date.now() - 60_000 });
    expect((await replay(group)).warnings).toEqual([]);
    const withIgnored = await service.createJob(operator, {
      kind: 'dlq.replay',
      filter: { group, status: 'ignored' },
    });
    expect(withIgnored.warnings).toEqual([expect.stringMatching(WARNING)]);
  });

  it('a resend warns only for old outbox rows', async () => {
    const type = `t.${uniqueName('x')}`;
    await store.transaction((tx) =>
      store.outbox.insert(tx, newRow({ type, createdAt: Date.now() - 60_000 }), { ordered: false }),
    );
    const fresh = await service.createJob(operator, { kind: 'outbox.resend', filter: { type } });
    expect([fresh.job.total, fresh.warnings]).toEqual([1, []]);
    await store.transaction((tx) =>
      store.outbox.insert(tx, newRow({ type, createdAt: Date.now() - 2 * HOUR }), { ordered: false }),
    );
    const old = await service.createJob(operator, { kind: 'outbox.resend', filter: { type } });
    expect(old.warnings).toEqual([expect.stringMatching(/older than the inbox window/)]);
  });

  it('an ignore job runs no handler: no warning', async () => {
    const group = uniqueName('g');
    await seedDeadLetters(store, 1, { group, at: Date.now() - 2 * HOUR });
    const res = await service.createJob(operator, { kind: 'dlq.ignore', filter: { group }, reason: 'obsolete' });
    expect(res.warnings).toEqual([]);
  });
});
