import type { AdminStore } from '../../ports/admin-store.js';
import * as actions from './admin-actions.js';
import type { AdminContext } from './admin-context.js';
import * as jobs from './admin-jobs.js';
import * as reads from './admin-reads.js';
import * as auditedJobs from './audited-jobs.js';

/**
 * The admin concern of every SQL store: the operations are the same for all dialects, given the
 * dialect's connection and `admin-sql.ts`.
 */
export function createAdminStore(ctx: AdminContext): AdminStore {
  return {
    listOutbox: (filter, page) => reads.listOutbox(ctx, filter, page),
    listDeadLetters: (filter, page, now = Date.now()) => reads.listDeadLetters(ctx, filter, page, now),
    getDeadLetterById: (id, now = Date.now()) => reads.getDeadLetterById(ctx, id, now),
    lineage: (messageId, now = Date.now()) => reads.lineage(ctx, messageId, now),
    overview: (now) => reads.overview(ctx, now),
    requestReplay: (id, a) => actions.requestReplay(ctx, id, a),
    ignoreDeadLetter: (id, reason, a) => actions.ignoreDeadLetter(ctx, id, reason, a),
    editDeadLetter: (id, body, a, options) => actions.editDeadLetter(ctx, id, body, a, options),
    resendOutbox: (messageId, a) => actions.resendOutbox(ctx, messageId, a),
    appendAudit: (entry) => actions.appendAudit(ctx, entry),
    listAudit: (filter, page) => reads.listAudit(ctx, filter, page),
    createJob: (job, audit) => auditedJobs.createJob(ctx, job, audit),
    getJob: (id) => reads.getJob(ctx, id),
    listJobs: (page) => reads.listJobs(ctx, page),
    claimJob: (owner, now, leaseMs, onlyId) => jobs.claimJob(ctx, owner, now, leaseMs, onlyId),
    releaseJob: (id, owner, now) => jobs.releaseJob(ctx, id, owner, now),
    runJobBatch: (jobId, owner, limit, now, leaseMs) => jobs.runJobBatch(ctx, jobId, owner, limit, now, leaseMs),
    cancelJob: (id, now, audit) => auditedJobs.cancelJob(ctx, id, now, audit),
    failJob: (id, error, now, owner) => jobs.failJob(ctx, id, error, now, owner),
  };
}
