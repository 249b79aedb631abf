import type { AdminJob, NewAuditEntry, NewJob } from '../../ports/admin-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { writeAudit } from './admin-actions.js';
import type { AdminContext } from './admin-context.js';
import * as jobs from './admin-jobs.js';

/**
 * Job creation and cancellation with their audit entry in the same transaction. The job operations
 * run on a context bound to that transaction, so they join it instead of opening their own.
 */

export function createJob(
  ctx: AdminContext,
  job: NewJob,
  audit?: (created: AdminJob) => NewAuditEntry,
): Promise<AdminJob> {
  if (!audit) return jobs.createJob(ctx, job);
  return ctx.db.transaction(async (tx) => {
    const created = await jobs.createJob(joined(ctx, tx), job);
    await writeAudit(tx, ctx, audit(created));
    return created;
  });
}

export function cancelJob(ctx: AdminContext, id: number, now: number, audit?: NewAuditEntry): Promise<boolean> {
  if (!audit) return jobs.cancelJob(ctx, id, now);
  return ctx.db.transaction(async (tx) => {
    if (!(await jobs.cancelJob(joined(ctx, tx), id, now))) return false;
    await writeAudit(tx, ctx, audit);
    return true;
  });
}

/** `ctx` with every statement, and any transaction it opens, running in `tx`. */
function joined(ctx: AdminContext, tx: SqlExecutor): AdminContext {
  return {
    ...ctx,
    db: { query: (text, values) => tx.query(text, values), transaction: (work) => work(tx) },
  };
}
