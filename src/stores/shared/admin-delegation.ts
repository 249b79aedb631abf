import type {
  ActionContext,
  AdminJob,
  AdminStore,
  AuditEntry,
  AuditFilter,
  DeadLetterFilter,
  EditOptions,
  Lineage,
  NewAuditEntry,
  NewJob,
  OutboxFilter,
  Overview,
  Page,
  PageRequest,
  RelayHeartbeat,
} from '../../ports/admin-store.js';
import type { DeadLetterRow } from '../../ports/consumer-store.js';
import type { OutboxRow } from '../../ports/outbox-store.js';
import * as actions from './admin-actions.js';
import type { AdminContext } from './admin-context.js';
import * as jobs from './admin-jobs.js';
import * as reads from './admin-reads.js';
import * as auditedJobs from './audited-jobs.js';
import { ConsumerDelegation } from './consumer-delegation.js';

/**
 * The admin half of every store, on top of the consumer half: the operations are the same for all
 * dialects (shared/admin-*.ts), given the dialect's connection and `admin-sql.ts`. So one store
 * object serves the relay, the consumers and the console.
 */
export abstract class AdminDelegation extends ConsumerDelegation implements AdminStore {
  protected abstract readonly admin: AdminContext;

  listOutbox(filter: OutboxFilter, page: PageRequest): Promise<Page<OutboxRow>> {
    return reads.listOutbox(this.admin, filter, page);
  }
  listDeadLetters(filter: DeadLetterFilter, page: PageRequest, now = Date.now()): Promise<Page<DeadLetterRow>> {
    return reads.listDeadLetters(this.admin, filter, page, now);
  }
  getDeadLetterById(id: number, now = Date.now()): Promise<DeadLetterRow | undefined> {
    return reads.getDeadLetterById(this.admin, id, now);
  }
  lineage(messageId: string, now = Date.now()): Promise<Lineage | undefined> {
    return reads.lineage(this.admin, messageId, now);
  }
  overview(now: number): Promise<Overview> {
    return reads.overview(this.admin, now);
  }
  recordHeartbeat(heartbeat: RelayHeartbeat): Promise<void> {
    return actions.recordHeartbeat(this.admin, heartbeat);
  }
  recordRelayStopped(relayId: string, at: number): Promise<void> {
    return actions.recordRelayStopped(this.admin, relayId, at);
  }
  relays(): Promise<RelayHeartbeat[]> {
    return reads.relays(this.admin);
  }
  requestReplay(id: number, ctx: ActionContext): Promise<boolean> {
    return actions.requestReplay(this.admin, id, ctx);
  }
  ignoreDeadLetter(id: number, reason: string, ctx: ActionContext): Promise<boolean> {
    return actions.ignoreDeadLetter(this.admin, id, reason, ctx);
  }
  editDeadLetter(id: number, body: string, ctx: ActionContext, options?: EditOptions): Promise<boolean> {
    return actions.editDeadLetter(this.admin, id, body, ctx, options);
  }
  resendOutbox(messageId: string, ctx: ActionContext): Promise<boolean> {
    return actions.resendOutbox(this.admin, messageId, ctx);
  }
  appendAudit(entry: NewAuditEntry): Promise<number> {
    return actions.appendAudit(this.admin, entry);
  }
  listAudit(filter: AuditFilter, page: PageRequest): Promise<Page<AuditEntry>> {
    return reads.listAudit(this.admin, filter, page);
  }
  createJob(job: NewJob, audit?: (created: AdminJob) => NewAuditEntry): Promise<AdminJob> {
    return auditedJobs.createJob(this.admin, job, audit);
  }
  getJob(id: number): Promise<AdminJob | undefined> {
    return reads.getJob(this.admin, id);
  }
  listJobs(page: PageRequest): Promise<Page<AdminJob>> {
    return reads.listJobs(this.admin, page);
  }
  claimJob(owner: string, now: number, leaseMs: number, onlyId?: number): Promise<AdminJob | undefined> {
    return jobs.claimJob(this.admin, owner, now, leaseMs, onlyId);
  }
  releaseJob(id: number, owner: string, now: number): Promise<boolean> {
    return jobs.releaseJob(this.admin, id, owner, now);
  }
  runJobBatch(
    jobId: number,
    owner: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<AdminJob | undefined> {
    return jobs.runJobBatch(this.admin, jobId, owner, limit, now, leaseMs);
  }
  cancelJob(id: number, now: number, audit?: NewAuditEntry): Promise<boolean> {
    return auditedJobs.cancelJob(this.admin, id, now, audit);
  }
  failJob(id: number, error: string, now: number, owner?: string): Promise<boolean> {
    return jobs.failJob(this.admin, id, error, now, owner);
  }
}
