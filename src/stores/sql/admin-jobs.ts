import { InvalidOptionError, StoreError } from '../../core/errors.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { AdminJob, DeadLetterFilter, JobKind, NewJob } from '../../ports/admin-store.js';
import { insertReturningId } from './admin-actions.js';
import { run, type AdminContext } from './admin-context.js';
import { toAdminJob } from './admin-rows.js';
import * as sql from './admin-sql.js';
import {
  ignoreTransition,
  JOB_REPLAY_DEFAULT,
  jobReplayFrom,
  replayTransition,
  transitionDeadLetters,
} from './dead-letter-transition.js';
import { resendOutboxRows } from './outbox-resend.js';

/**
 * Bulk actions by filter. A job's rows are those matching its filter with ids in (cursor, maxId];
 * each batch acts on the next ones and moves the cursor in the same transaction, under a lock on
 * the job row that only its current owner gets past. So a batch either happens whole or not at all,
 * and no row is ever acted on twice, however owners race or die. A batch never waits for a row
 * another transaction holds: it stops before it, and a later batch takes it up.
 */

const JOB_KINDS: readonly JobKind[] = ['dlq.replay', 'dlq.ignore', 'outbox.resend'];

export async function createJob(ctx: AdminContext, job: NewJob): Promise<AdminJob> {
  if (!JOB_KINDS.includes(job.kind)) {
    throw new InvalidOptionError('kind', `must be one of ${JOB_KINDS.join(', ')}`);
  }
  const d = ctx.sql.adminDialect;
  // A replay names its statuses, so the job shows (and counts) what it acts on: never ignored rows unless asked.
  const stored: NewJob =
    job.kind === 'dlq.replay' && (job.filter as DeadLetterFilter).status === undefined
      ? { ...job, filter: { ...job.filter, status: JOB_REPLAY_DEFAULT } }
      : job;
  return ctx.db.transaction(async (tx) => {
    const { rows } = await run(tx, sql.countJobRows(d, ctx.t, stored.kind, stored.filter, stored.now));
    const total = Number(rows[0]?.n ?? 0);
    const maxId = rows[0]?.max_id === null || rows[0]?.max_id === undefined ? 0 : Number(rows[0].max_id);
    const id = await insertReturningId(tx, ctx, sql.insertJob(d, ctx.t, stored, total, maxId));
    return toAdminJob((await run(tx, sql.selectJob(d, ctx.t, id))).rows[0]!);
  });
}

export function claimJob(
  ctx: AdminContext,
  owner: string,
  now: number,
  leaseMs: number,
  onlyId?: number,
): Promise<AdminJob | undefined> {
  const d = ctx.sql.adminDialect;
  return ctx.db.transaction(async (tx) => {
    const { rows } = await run(tx, sql.selectClaimableJob(d, ctx.t, owner, now, onlyId));
    if (!rows[0]) return undefined;
    const id = Number(rows[0].id);
    if ((await run(tx, sql.takeJob(d, ctx.t, id, owner, now, leaseMs))).rowCount !== 1) return undefined;
    return toAdminJob((await run(tx, sql.selectJob(d, ctx.t, id))).rows[0]!);
  });
}

/**
 * One batch; `now` is when it started. The lease runs `leaseMs` from the batch's commit, not its
 * start: a batch slowed by locks or a busy database still leaves its owner the whole lease.
 */
export async function runJobBatch(
  ctx: AdminContext,
  jobId: number,
  owner: string,
  limit: number,
  now: number,
  leaseMs: number,
): Promise<AdminJob | undefined> {
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidOptionError('limit', 'must be an integer >= 1');
  const started = performance.now();
  const { t } = ctx;
  const d = ctx.sql.adminDialect;
  return ctx.db.transaction(async (tx) => {
    const locked = (await run(tx, sql.selectJob(d, t, jobId, true))).rows[0];
    if (!locked) return undefined;
    const job = toAdminJob(locked);
    if (job.owner !== owner) return undefined;
    if (job.status !== 'running') return job;
    const candidates = (await run(tx, sql.selectJobRows(d, t, job, limit, now))).rows.map((r) => Number(r.id));
    const ids = await lockedPrefix(tx, ctx, job.kind, candidates);
    const actor = `job:${job.id}`;
    let changed: number;
    switch (job.kind) {
      case 'dlq.replay':
        changed = await transitionDeadLetters(
          tx,
          d,
          t,
          replayTransition(ids, actor, now, jobReplayFrom(job.filter as DeadLetterFilter)),
        );
        break;
      case 'dlq.ignore':
        changed = await transitionDeadLetters(tx, d, t, ignoreTransition(ids, job.reason ?? actor, actor, now));
        break;
      case 'outbox.resend':
        changed = await resendOutboxRows(tx, ctx.sql, t, { seqs: ids }, actor, now);
        break;
    }
    const skipped = ids.length < candidates.length;
    const next = {
      cursor: ids.length > 0 ? ids[ids.length - 1]! : job.cursor,
      status: !skipped && candidates.length < limit ? ('done' as const) : ('running' as const),
      leaseUntil: now + Math.ceil(performance.now() - started) + leaseMs,
    };
    const advanced = await run(
      tx,
      sql.advanceJob(d, t, { id: job.id, owner, examined: ids.length, changed, now, ...next }),
    );
    if (advanced.rowCount !== 1) throw new StoreError(`job ${job.id} changed while its row was locked`);
    return {
      ...job,
      ...next,
      done: job.done + ids.length,
      changed: job.changed + changed,
      updatedAt: now,
    };
  });
}

/**
 * Locks the batch's rows that nobody else holds and returns those before the first one that is
 * held (or gone): the cursor may only move past rows acted on, and rows after a held one would
 * otherwise be acted on again by the batch that comes back for it.
 */
async function lockedPrefix(
  tx: SqlExecutor,
  ctx: AdminContext,
  kind: JobKind,
  candidates: readonly number[],
): Promise<number[]> {
  if (candidates.length === 0) return [];
  const { rows } = await run(tx, sql.lockJobRows(ctx.sql.adminDialect, ctx.t, kind, candidates));
  const held = new Set(rows.map((r) => Number(r.id)));
  const firstMissing = candidates.findIndex((id) => !held.has(id));
  return firstMissing === -1 ? [...candidates] : candidates.slice(0, firstMissing);
}

export async function releaseJob(ctx: AdminContext, id: number, owner: string, now: number): Promise<boolean> {
  return (await run(ctx.db, sql.releaseJob(ctx.sql.adminDialect, ctx.t, id, owner, now))).rowCount === 1;
}

export async function cancelJob(ctx: AdminContext, id: number, now: number): Promise<boolean> {
  return (await run(ctx.db, sql.endJob(ctx.sql.adminDialect, ctx.t, id, 'cancelled', null, now))).rowCount === 1;
}

/** running -> failed; with `owner`, only while that owner holds the job (a runner that lost it fails nothing). */
export async function failJob(
  ctx: AdminContext,
  id: number,
  error: string,
  now: number,
  owner?: string,
): Promise<boolean> {
  return (await run(ctx.db, sql.endJob(ctx.sql.adminDialect, ctx.t, id, 'failed', error, now, owner))).rowCount === 1;
}
