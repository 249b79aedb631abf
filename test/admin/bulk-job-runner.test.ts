/**
 * The job runner in-process: takeover after a stopped runner's lease (with the pacing carried over),
 * batch failures and lock conflicts injected for real (SQLite busy, a PostgreSQL deadlock).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/admin/index.js';
import type { Logger } from '../../src/core/logger.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import type { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { testEnv, uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

/** What the runner logged, by level: `[message, fields]`. */
function recordingLogger() {
  const lines = { info: [] as [string, unknown][], warn: [] as [string, unknown][], error: [] as [string, unknown][] };
  const logger: Logger = {
    debug: () => undefined,
    info: (o, msg) => void lines.info.push([msg ?? '', o]),
    warn: (o, msg) => void lines.warn.push([msg ?? '', o]),
    error: (o, msg) => void lines.error.push([msg ?? '', o]),
  };
  return { logger, lines, said: (level: keyof typeof lines, msg: string) => lines[level].some(([m]) => m === msg) };
}

describe('JobRunner (SQLite)', () => {
  let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
  let store: AdminTestStore;
  let group: string;
  const runners: JobRunner[] = [];
  let log: ReturnType<typeof recordingLogger>;

  beforeEach(async () => {
    f = (await storeFixtures.sqlite('admin_jobs')) as typeof f;
    store = f.store as AdminTestStore;
    group = uniqueName('g');
    log = recordingLogger();
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await f.teardown();
  });

  const runner = (owner: string, extra: Partial<ConstructorParameters<typeof JobRunner>[0]> = {}) => {
    const r = new JobRunner({ store, owner, leaseMs: 1_000, pollIntervalMs: 50, logger: log.logger, ...extra });
    runners.push(r);
    return r;
  };
  const newJob = (ratePerSecond: number) =>
    store.admin.createJob({
      kind: 'dlq.replay',
      filter: { group },
      reason: null,
      actor: 'test',
      ratePerSecond,
      now: Date.now(),
    });
  /** The distinct times the job's batches started at, in order (each batch stamps its rows' events). */
  const batchStarts = async (jobId: number) =>
    (
      await store.transaction((tx) =>
        tx.query<{ at: number }>(
          `SELECT DISTINCT at FROM ${store.tables.deadLetterEvents} WHERE kind = 'replay_requested' AND actor = ? ORDER BY at`,
          [`job:${jobId}`],
        ),
      )
    ).rows.map((r) => Number(r.at));
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
    await waitFor('runner a to make progress', async () => (await store.admin.getJob(job.id))!.done >= 20, 10_000);
    await a.stop();
    const held = (await store.admin.getJob(job.id))!;
    expect(held).toMatchObject({ status: 'running', owner: null, leaseUntil: null });
    expect(held.done).toBeLessThan(60);
    const b = runner('runner-b');
    b.start();
    await waitFor(
      'runner b to finish the job',
      async () => (await store.admin.getJob(job.id))!.status === 'done',
      20_000,
    );
    expect((await store.admin.getJob(job.id))!).toMatchObject({ owner: 'runner-b', done: 60, changed: 60 });
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
    await waitFor('a failed batch', () => log.said('warn', 'admin job batch failed'), 10_000);
    expect((await store.admin.getJob(job.id))!.done).toBe(0);
    await renameEvents('events_away', events);
    await waitFor('the job to finish', async () => (await store.admin.getJob(job.id))!.status === 'done', 20_000);
    expect(await eventsPerRow(job.id)).toEqual(Array(10).fill(1));
  });

  it('marks the job failed after repeated batch failures: a code for viewers, the error in the log', async () => {
    await seedDeadLetters(store, 5, { group });
    const events = store.tables.deadLetterEvents;
    await renameEvents(events, 'events_gone');
    try {
      const job = await newJob(1_000);
      runner('runner-a', { maxBatchFailures: 3 }).start();
      await waitFor('the job to fail', async () => (await store.admin.getJob(job.id))!.status === 'failed', 20_000);
      const failed = (await store.admin.getJob(job.id))!;
      // Viewers read the job: no table name, driver message or SQL reaches them.
      expect(failed.error).toBe("SURETY_STORE_FAILED: 3 batches in a row failed; the job runner's log has the error");
      expect(failed.done).toBe(0);
      expect(log.lines.warn.filter(([m]) => m === 'admin job batch failed')).toHaveLength(3);
      const logged = log.lines.error.find(([m]) => m === 'admin job failed');
      expect(logged?.[1]).toMatchObject({ jobId: job.id, err: expect.stringMatching(/no such table/i) });
    } finally {
      await renameEvents('events_gone', events);
    }
    const rows = (await store.admin.listDeadLetters({ group }, { limit: 10 })).items;
    expect(rows.every((r) => r.status === 'dead')).toBe(true);
  });

  it("a runner taking over a job waits out the pacing of the previous owner's last batch", async () => {
    await seedDeadLetters(store, 40, { group });
    const job = await newJob(50); // batches of 10 rows, at least 200 ms apart
    const a = runner('runner-a');
    a.start();
    await waitFor("runner a's first batch", async () => (await store.admin.getJob(job.id))!.done >= 10, 10_000, 5);
    await a.stop(); // during its pacing wait, just after the batch
    runner('runner-b').start();
    await waitFor(
      'runner b to finish the job',
      async () => (await store.admin.getJob(job.id))!.status === 'done',
      20_000,
    );
    expect(await store.admin.getJob(job.id)).toMatchObject({ owner: 'runner-b', done: 40, changed: 40 });
    const starts = await batchStarts(job.id);
    expect(starts.length).toBeGreaterThanOrEqual(4);
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    // 2 ms for the two clocks the runner reads (the pacer's monotonic one, the batch's wall clock).
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(198);
  });

  it('retries a batch the database refused as busy at once, not counting it as a failure', async () => {
    await seedDeadLetters(store, 40, { group });
    f.store.db.pragma('busy_timeout = 100');
    const job = await newJob(50); // batches of 10 rows
    runner('runner-a', { maxBatchFailures: 1 }).start();
    await waitFor('the first batch', async () => (await store.admin.getJob(job.id))!.done >= 10, 10_000, 5);
    // Another process's writer, as a second connection to the file: the store cannot begin its batches.
    const other = new Database(f.path);
    other.exec('BEGIN IMMEDIATE');
    try {
      await waitFor(
        'two lock conflicts',
        () => log.lines.info.filter(([m]) => m.includes('lock conflict')).length >= 2,
        10_000,
      );
      other.exec('ROLLBACK');
      await waitFor('the job to finish', async () => (await store.admin.getJob(job.id))!.status !== 'running', 20_000);
      expect(await store.admin.getJob(job.id)).toMatchObject({ status: 'done', done: 40, changed: 40, error: null });
      expect(log.said('warn', 'admin job batch failed')).toBe(false);
      const conflict = log.lines.info.find(([m]) => m.includes('lock conflict'))!;
      expect(conflict[1]).toMatchObject({ jobId: job.id, err: expect.stringMatching(/database is locked/) });
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });
});

describe('JobRunner (PostgreSQL)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  const runners: JobRunner[] = [];
  beforeEach(async () => {
    f = await makePostgresFixture('admin_jobs_pg');
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await f.teardown();
  });

  it('retries a batch PostgreSQL ended as a deadlock victim at once, not counting it as a failure', async () => {
    const store = f.store as unknown as AdminTestStore;
    const group = uniqueName('g');
    await seedDeadLetters(store, 10, { group });
    const job = await store.admin.createJob({
      kind: 'dlq.replay',
      filter: { group },
      reason: null,
      actor: 'test',
      ratePerSecond: 1_000,
      now: Date.now(),
    });
    // The batch's history insert waits for an advisory lock the test holds; the test then waits for
    // the job row the batch holds. PostgreSQL ends the batch, which waited first, as the victim.
    const key = Math.floor(Math.random() * 2 ** 30);
    const schema = `"${f.schema}"`;
    await f.pool.query(`CREATE FUNCTION ${schema}.gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(${key}); RETURN NULL; END $$`);
    await f.pool.query(`CREATE TRIGGER gate BEFORE INSERT ON ${store.tables.deadLetterEvents}
      FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.gate()`);
    const holder = new pg.Client({ connectionString: testEnv.postgresUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [key]);
      const log = recordingLogger();
      const r = new JobRunner({ store, owner: 'runner-a', leaseMs: 30_000, maxBatchFailures: 1, logger: log.logger });
      runners.push(r);
      r.start();
      await waitFor('the batch to wait for the advisory lock', async () => {
        const { rows } = await f.pool.query(
          `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
          [key],
        );
        return rows.length > 0;
      });
      // Closes the cycle; returns once the batch is rolled back.
      await holder.query(`SELECT id FROM ${store.tables.adminJobs} WHERE id = $1 FOR UPDATE`, [job.id]);
      await holder.query('ROLLBACK');
      await waitFor('the job to finish', async () => (await store.admin.getJob(job.id))!.status !== 'running', 20_000);
      expect(await store.admin.getJob(job.id)).toMatchObject({ status: 'done', done: 10, changed: 10, error: null });
      const conflict = log.lines.info.find(([m]) => m.includes('lock conflict'));
      expect(conflict?.[1]).toMatchObject({ jobId: job.id, err: expect.stringMatching(/deadlock/) });
      expect(log.said('warn', 'admin job batch failed')).toBe(false);
    } finally {
      await holder.end();
    }
  });
});
