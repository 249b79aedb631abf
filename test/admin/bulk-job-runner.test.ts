/** The job runner in-process on SQLite: takeover after a stopped runner's lease, and batch failures injected for real. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/admin/index.js';
import type { Logger } from '../../src/core/logger.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

describe('JobRunner (SQLite)', () => {
  let f: StoreFixture;
  let store: AdminTestStore;
  let group: string;
  const runners: JobRunner[] = [];
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_o, msg) => void warnings.push(msg ?? ''),
    error: () => undefined,
  };

  beforeEach(async () => {
    f = await storeFixtures.sqlite('admin_jobs');
    store = f.store as AdminTestStore;
    group = uniqueName('g');
    warnings.length = 0;
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await f.teardown();
  });

  const runner = (owner: string, extra: Partial<ConstructorParameters<typeof JobRunner>[0]> = {}) => {
    const r = new JobRunner({ store, owner, leaseMs: 1_000, pollIntervalMs: 50, logger, ...extra });
    runners.push(r);
    return r;
  };
  const newJob = (ratePerSecond: number) =>
    store.createJob({
      kind: 'dlq.replay',
      filter: { group },
      reason: null,
      actor: 'test',
      ratePerSecond,
      now: Date.now(),
    });
  const eventsPerRow = async (jobId: number) =>
    (
      await store.transaction((tx) =>
        tx.query<{ n: number }>(
          `SELECT count(*) AS n FROM ${store.tables.deadLetterEvents} WHERE kind = 'replay_requested' AND actor = ? GROUP BY dead_letter_id`,
          [`job:${jobId}`],
        ),
      )
    ).rows.map((r) => Number(r.n));
  const renameEvents = (from: string, to: string) =>
    store.transaction((tx) => tx.query(`ALTER TABLE ${from} RENAME TO ${to}`));

  it('a runner that stops releases its job and a second runner resumes it at once, acting on no row twice', async () => {
    await seedDeadLetters(store, 60, { group });
    const job = await newJob(40);
    const a = runner('runner-a');
    a.start();
    await waitFor('runner a to make progress', async () => (await store.getJob(job.id))!.done >= 20, 10_000);
    await a.stop();
    const held = (await store.getJob(job.id))!;
    expect(held).toMatchObject({ status: 'running', owner: null, leaseUntil: null });
    expect(held.done).toBeLessThan(60);
    const b = runner('runner-b');
    b.start();
    await waitFor('runner b to finish the job', async () => (await store.getJob(job.id))!.status === 'done', 20_000);
    expect((await store.getJob(job.id))!).toMatchObject({ owner: 'runner-b', done: 60, changed: 60 });
    const counts = await eventsPerRow(job.id);
    expect(counts).toHaveLength(60);
    expect(counts.every((n) => n === 1)).toBe(true);
  });

  it('retries a batch that failed and finishes once the database recovers', async () => {
    await seedDeadLetters(store, 10, { group });
    const events = store.tables.deadLetterEvents;
    await renameEvents(events, 'events_away');
    const job = await newJob(1_000);
    runner('runner-a').start();
    await waitFor('a failed batch', () => warnings.includes('admin job batch failed'), 10_000);
    expect((await store.getJob(job.id))!.done).toBe(0);
    await renameEvents('events_away', events);
    await waitFor('the job to finish', async () => (await store.getJob(job.id))!.status === 'done', 20_000);
    expect(await eventsPerRow(job.id)).toEqual(Array(10).fill(1));
  });

  it('marks the job failed after repeated batch failures, with the error', async () => {
    await seedDeadLetters(store, 5, { group });
    const events = store.tables.deadLetterEvents;
    await renameEvents(events, 'events_gone');
    try {
      const job = await newJob(1_000);
      runner('runner-a', { maxBatchFailures: 3 }).start();
      await waitFor('the job to fail', async () => (await store.getJob(job.id))!.status === 'failed', 20_000);
      const failed = (await store.getJob(job.id))!;
      expect(failed.error).toMatch(/events|no such table/i);
      expect(failed.done).toBe(0);
      expect(warnings.filter((w) => w === 'admin job batch failed')).toHaveLength(3);
    } finally {
      await renameEvents('events_gone', events);
    }
    const rows = (await store.listDeadLetters({ group }, { limit: 10 })).items;
    expect(rows.every((r) => r.status === 'dead')).toBe(true);
  });
});
