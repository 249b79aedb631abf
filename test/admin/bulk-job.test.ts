/**
 * Acceptance 3: a bulk replay of 10,000 dead letters, created over HTTP on a server running in its
 * own process, reports progress, survives a SIGKILL of that server midway (a new server process
 * resumes it after the lease expires) without replaying any row twice, and never exceeds its rate.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, newToken } from '../support/admin-http.js';
import { writeDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { waitFor } from '../support/wait.js';

const ROWS = 10_000;
/** 10,000 rows at 600/s take about 17 s, plus the lease the second server waits out. */
const RATE = 600;
/** The runner's batch: a fifth of the rate, so a second holds about five batches. */
const BATCH = RATE / 5;
const LEASE_MS = 2_000;

describe('bulk replay job across a server crash (PostgreSQL)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  const children: ChildProcess[] = [];
  const token = newToken('bulk');
  const group = uniqueName('bulk');

  beforeAll(async () => {
    f = await makePostgresFixture('admin_bulk');
    await writeDeadLetters(f.store as AdminTestStore, ROWS, { group, status: 'dead' }, 1_000, 4);
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await f?.teardown();
  });

  async function startServer(): Promise<{ child: ChildProcess; api: ApiClient }> {
    const child = spawnTs('support/admin-server-process.ts', {
      SURETY_PG_URL: testEnv.postgresUrl,
      SURETY_PG_SCHEMA: f.schema,
      SURETY_ADMIN_TOKEN: token,
      SURETY_LEASE_MS: String(LEASE_MS),
    });
    children.push(child);
    const ended = exited(child);
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /ready (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void ended.then((e) => reject(new Error(`admin server exited early: ${e.code} ${e.stderr}`)));
    });
    return { child, api: new ApiClient(url) };
  }

  it('replays every row exactly once at no more than its rate, resuming after a SIGKILL', async () => {
    const first = await startServer();
    const created = await first.api.call('POST', '/api/jobs', {
      token,
      body: { kind: 'dlq.replay', filter: { group, status: 'dead' }, reason: 'billing is back', ratePerSecond: RATE },
    });
    expect(created.status, created.text).toBe(202);
    expect(created.body.job).toMatchObject({ total: ROWS, done: 0, status: 'running' });
    const jobId = created.body.job.id as number;

    const progress: number[] = [];
    const poll = async (api: ApiClient) => {
      const job = (await api.call('GET', `/api/jobs/${jobId}`, { token })).body;
      if (progress.at(-1) !== job.done) progress.push(job.done as number);
      return job as { done: number; status: string; owner: string | null };
    };
    await waitFor('the job to be 40% done', async () => (await poll(first.api)).done >= ROWS * 0.4, 60_000, 200);
    first.child.kill('SIGKILL');
    const killed = await exited(first.child);
    expect(killed.signal).toBe('SIGKILL');
    const { rows: midway } = await f.pool.query(
      `SELECT status, done, owner FROM "${f.schema}".surety_admin_jobs WHERE id = $1`,
      [jobId],
    );
    expect(midway[0]).toMatchObject({ status: 'running' });
    expect(Number(midway[0].done)).toBeLessThan(ROWS);

    const second = await startServer();
    await waitFor(
      'the job to finish on the second server',
      async () => (await poll(second.api)).status === 'done',
      90_000,
      200,
    );
    const job = (await second.api.call('GET', `/api/jobs/${jobId}`, { token })).body;
    expect(job).toMatchObject({ status: 'done', total: ROWS, done: ROWS, changed: ROWS });
    expect(job.owner).not.toBe(midway[0].owner);
    second.child.kill('SIGTERM');
    expect((await exited(second.child)).code).toBe(0);

    // Progress was visible all along and never went back.
    expect(progress.length).toBeGreaterThan(10);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    // Every row got exactly one replay request from the job, and is due now.
    const events = `"${f.schema}".surety_dead_letter_events`;
    const { rows: perRow } = await f.pool.query<{ n: string; rows: string }>(
      `SELECT count(*) AS rows, max(n) AS n FROM (
         SELECT dead_letter_id, count(*) AS n FROM ${events}
         WHERE kind = 'replay_requested' AND actor = $1 GROUP BY dead_letter_id) per_row`,
      [`job:${jobId}`],
    );
    expect(Number(perRow[0]!.rows)).toBe(ROWS);
    expect(Number(perRow[0]!.n)).toBe(1);
    const { rows: statuses } = await f.pool.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM "${f.schema}".surety_dead_letters WHERE group_name = $1 GROUP BY status`,
      [group],
    );
    expect(statuses.map((s) => [s.status, Number(s.n)])).toEqual([['pending', ROWS]]);

    // In no one-second window did the job act on more rows than its rate plus one batch.
    const { rows: times } = await f.pool.query<{ at: string }>(
      `SELECT at FROM ${events} WHERE kind = 'replay_requested' AND actor = $1 ORDER BY at`,
      [`job:${jobId}`],
    );
    const at = times.map((r) => Number(r.at));
    let worst = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[j]! < at[i]! - 999) j++;
      worst = Math.max(worst, i - j + 1);
    }
    expect(worst).toBeLessThanOrEqual(RATE + BATCH);
    // ...and it did run near its rate (the limit is what held it back).
    expect(worst).toBeGreaterThan(RATE * 0.6);
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(((ROWS - RATE - BATCH) / RATE) * 1000);
  });
});
