import { z } from 'zod';
import { systemClock, type Clock } from '../core/clock.js';
import { loggerOption, parseOptions } from '../core/options.js';
import type {
  Actor,
  AdminJob,
  AdminStore,
  RelayHeartbeatStore,
  AuditEntry,
  DeadLetterEvent,
  Lineage,
  OutboxAttempt,
  Overview,
  Page,
} from '../ports/admin-store.js';
import type { DeadLetterRow, InboxStore } from '../ports/consumer-store.js';
import type { OutboxRow } from '../ports/outbox-store.js';
import { auditedAction, type ActionResult, type OkEntry } from './action-audit.js';
import { ConflictError, ForbiddenError, NotFoundError } from './admin-errors.js';
import {
  auditFilterSchema,
  deadLetterFilterSchema,
  editBodySchema,
  jobInputSchema,
  messageIdSchema,
  optionalReasonSchema,
  outboxFilterSchema,
  pageSchema,
  parseInput,
  requiredReasonSchema,
  rowIdSchema,
  type AuditAction,
  type AuditFilterInput,
  type DeadLetterFilterInput,
  type JobInput,
  type OutboxFilterInput,
  type PageInput,
} from './admin-schemas.js';
import { jobWindowCutoff, jobWindowWarnings, replayWindowWarnings, resendWindowWarnings } from './inbox-window.js';

export type { ActionResult } from './action-audit.js';

/** What the admin service needs of a store: its admin concern, the inbox lookup and the relay heartbeats. */
export interface AdminServiceStore {
  readonly dialect?: string;
  readonly admin: AdminStore;
  readonly inbox: Pick<InboxStore, 'inboxRecordedAt'>;
  readonly heartbeats: Pick<RelayHeartbeatStore, 'relays'>;
}

const fn = <T>(what: string) => z.custom<T>((v) => typeof v === 'function', `must be ${what}`);
const optionsSchema = z.object({
  store: z.custom<AdminServiceStore>(
    (v) =>
      typeof (v as Partial<AdminServiceStore> | null)?.admin?.listDeadLetters === 'function' &&
      typeof (v as Partial<AdminServiceStore> | null)?.inbox?.inboxRecordedAt === 'function',
    'must be a Surety store (with its admin and inbox concerns)',
  ),
  /** Editing a dead letter's body before replaying it; off unless enabled. */
  allowEdit: z.boolean().default(false),
  /** The consumers' inbox retention: replays and resends past it warn that the handler may run again. */
  inboxWindowMs: z.number().int().positive().optional(),
  maxJobRatePerSecond: z.number().positive().max(1_000_000).default(10_000),
  clock: z.custom<Clock>((v) => typeof (v as Clock | null)?.now === 'function', 'must have now()').default(systemClock),
  logger: loggerOption('surety-admin'),
  /** Called after a job is created, e.g. to wake the job runner. */
  onJobCreated: fn<(job: AdminJob) => void>('a function').optional(),
});

export type AdminServiceOptions = z.input<typeof optionsSchema>;

const actorSchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
  role: z.enum(['viewer', 'operator'], { error: 'must be viewer or operator' }),
});

const REPLAYABLE = new Set(['pending', 'dead', 'ignored']);
const IGNORABLE = new Set(['pending', 'dead']);
/** What a bulk replay whose filter names no status acts on. */
const REPLAY_JOB_DEFAULT = ['pending', 'dead'] as const;

/**
 * The one path to every operator read and action, shared by the HTTP API, the console and the CLI.
 * Actions check the operator role, validate their input, warn when the inbox window has passed and
 * write an audit entry whatever the outcome: with the change, in its transaction, when it succeeds.
 * @example
 * const admin = new AdminService({ store, inboxWindowMs: 7 * 86_400_000 });
 * const { warnings } = await admin.replay(42, { name: 'alice', role: 'operator' }, 'downstream fixed');
 */
export class AdminService {
  private readonly o: Readonly<z.output<typeof optionsSchema>>;

  constructor(options: AdminServiceOptions) {
    this.o = parseOptions(optionsSchema, options, 'admin');
  }

  get allowEdit(): boolean {
    return this.o.allowEdit;
  }

  get inboxWindowMs(): number | undefined {
    return this.o.inboxWindowMs;
  }

  async overview(): Promise<Overview> {
    return this.o.store.admin.overview(this.o.clock.now());
  }

  async listOutbox(filter: OutboxFilterInput = {}, page: PageInput = {}): Promise<Page<OutboxRow>> {
    return this.o.store.admin.listOutbox(
      parseInput(outboxFilterSchema, filter, 'filter'),
      parseInput(pageSchema, page, 'page'),
    );
  }

  async getOutbox(messageId: string): Promise<OutboxRow & { history: OutboxAttempt[] }> {
    const id = parseInput(messageIdSchema, messageId, 'messageId');
    const outbox = (await this.o.store.admin.lineage(id, this.o.clock.now()))?.outbox;
    if (!outbox) throw new NotFoundError(`no outbox row has message id ${id}`);
    return outbox;
  }

  /** Statuses as of the service's clock: a row whose replayer's lease ran out is pending. */
  async listDeadLetters(filter: DeadLetterFilterInput = {}, page: PageInput = {}): Promise<Page<DeadLetterRow>> {
    return this.o.store.admin.listDeadLetters(
      parseInput(deadLetterFilterSchema, filter, 'filter'),
      parseInput(pageSchema, page, 'page'),
      this.o.clock.now(),
    );
  }

  async getDeadLetter(id: number): Promise<DeadLetterRow & { history: DeadLetterEvent[] }> {
    const now = this.o.clock.now();
    const row = await this.deadLetter(parseInput(rowIdSchema, id, 'id'), now);
    const lineage = await this.o.store.admin.lineage(row.messageId, now);
    return lineage?.deadLetters.find((d) => d.id === row.id) ?? { ...row, history: [] };
  }

  async lineage(messageId: string): Promise<Lineage> {
    const lineage = await this.findLineage(messageId);
    if (!lineage) throw new NotFoundError(`no outbox row, inbox record or dead letter knows message ${messageId}`);
    return lineage;
  }

  /** {@link lineage}, but undefined when this store does not know the message (one store of several may not). */
  async findLineage(messageId: string): Promise<Lineage | undefined> {
    return this.o.store.admin.lineage(parseInput(messageIdSchema, messageId, 'messageId'), this.o.clock.now());
  }

  async listAudit(filter: AuditFilterInput = {}, page: PageInput = {}): Promise<Page<AuditEntry>> {
    return this.o.store.admin.listAudit(
      parseInput(auditFilterSchema, filter, 'filter'),
      parseInput(pageSchema, page, 'page'),
    );
  }

  async listJobs(page: PageInput = {}): Promise<Page<AdminJob>> {
    return this.o.store.admin.listJobs(parseInput(pageSchema, page, 'page'));
  }

  async getJob(id: number): Promise<AdminJob> {
    const jobId = parseInput(rowIdSchema, id, 'id');
    const job = await this.o.store.admin.getJob(jobId);
    if (!job) throw new NotFoundError(`job ${jobId} not found`);
    return job;
  }

  /**
   * Makes a dead letter (pending, dead or ignored; a dead replayer's row is pending) due now; the
   * consumer's replay job runs it. A row under a live lease is refused.
   */
  async replay(id: number, actor: Actor, reason?: string | null): Promise<ActionResult> {
    const rowId = parseInput(rowIdSchema, id, 'id');
    const why = parseInput(optionalReasonSchema, reason, 'reason');
    return this.act(actor, 'dlq.replay', `dlq:${rowId}`, why, async (now, ok) => {
      const row = await this.deadLetter(rowId, now);
      if (!REPLAYABLE.has(row.status)) throw this.stateConflict(row, 'replayed', 'pending, dead or ignored');
      const warnings = await replayWindowWarnings(this.o.store.inbox, this.o.inboxWindowMs, row, now);
      const audit = ok({ messageId: row.messageId, group: row.group }, warnings);
      if (!(await this.o.store.admin.requestReplay(rowId, { actor: actor.name, now, audit }))) {
        throw this.changedMeanwhile(rowId);
      }
      return { changed: true, warnings };
    });
  }

  /**
   * Closes a dead letter (pending, a dead replayer's row included, or dead) without running it; the
   * reason is required.
   */
  async ignore(id: number, actor: Actor, reason: string): Promise<ActionResult> {
    const rowId = parseInput(rowIdSchema, id, 'id');
    const why = parseInput(requiredReasonSchema, reason, 'reason');
    return this.act(actor, 'dlq.ignore', `dlq:${rowId}`, why, async (now, ok) => {
      const row = await this.deadLetter(rowId, now);
      if (!IGNORABLE.has(row.status)) throw this.stateConflict(row, 'ignored', 'pending or dead');
      const audit = ok({ messageId: row.messageId, group: row.group });
      if (!(await this.o.store.admin.ignoreDeadLetter(rowId, why, { actor: actor.name, now, audit }))) {
        throw this.changedMeanwhile(rowId);
      }
      return { changed: true, warnings: [] };
    });
  }

  /**
   * Replaces a dead letter's body (the old one stays in its history) and replays it, in one
   * transaction: the body is never left edited without the replay. Needs `allowEdit`.
   */
  async edit(id: number, actor: Actor, body: string, reason: string): Promise<ActionResult> {
    const rowId = parseInput(rowIdSchema, id, 'id');
    const newBody = parseInput(editBodySchema, body, 'body');
    const why = parseInput(requiredReasonSchema, reason, 'reason');
    return this.act(actor, 'dlq.edit', `dlq:${rowId}`, why, async (now, ok) => {
      if (!this.o.allowEdit) throw new ForbiddenError('editing dead letters is disabled (enable it with allowEdit)');
      const row = await this.deadLetter(rowId, now);
      if (!REPLAYABLE.has(row.status)) throw this.stateConflict(row, 'edited', 'pending, dead or ignored');
      const warnings = await replayWindowWarnings(this.o.store.inbox, this.o.inboxWindowMs, row, now);
      const audit = ok({ messageId: row.messageId, group: row.group, bodyChars: newBody.length }, warnings);
      const edited = await this.o.store.admin.editDeadLetter(
        rowId,
        newBody,
        { actor: actor.name, now, audit },
        { replay: true },
      );
      if (!edited) throw this.changedMeanwhile(rowId);
      return { changed: true, warnings };
    });
  }

  /** Publishes an outbox message again (also one already sent), with the same message id. */
  async resend(messageId: string, actor: Actor, reason?: string | null): Promise<ActionResult> {
    const id = parseInput(messageIdSchema, messageId, 'messageId');
    const why = parseInput(optionalReasonSchema, reason, 'reason');
    return this.act(actor, 'outbox.resend', `outbox:${id}`, why, async (now, ok) => {
      const row = (await this.o.store.admin.lineage(id, now))?.outbox;
      if (!row) throw new NotFoundError(`no outbox row has message id ${id}`);
      const warnings = resendWindowWarnings(this.o.inboxWindowMs, row.createdAt, now);
      const audit = ok({ previousStatus: row.status, type: row.type }, warnings);
      if (!(await this.o.store.admin.resendOutbox(id, { actor: actor.name, now, audit }))) {
        throw new ConflictError(`outbox message ${id} changed or was purged meanwhile; look at it again`);
      }
      return { changed: true, warnings };
    });
  }

  /** Starts a bulk action over the rows matching a filter; a job runner works through it at `ratePerSecond`. */
  async createJob(actor: Actor, input: JobInput): Promise<ActionResult & { job: AdminJob }> {
    const job = parseInput(jobInputSchema(this.o.maxJobRatePerSecond), input, '');
    return this.act(actor, 'job.create', 'job:new', job.reason, async (now, ok) => {
      const old = await this.matchesPastWindow(job, now);
      const windowWarnings = old ? jobWindowWarnings(this.o.inboxWindowMs!) : [];
      const warningsFor = (created: AdminJob) => (created.total === 0 ? ['no row matches the filter'] : windowWarnings);
      const created = await this.o.store.admin.createJob({ ...job, actor: actor.name, now }, (made) =>
        ok(
          { kind: job.kind, filter: job.filter, total: made.total, ratePerSecond: job.ratePerSecond },
          warningsFor(made),
          `job:${made.id}`,
        ),
      );
      this.o.onJobCreated?.(created);
      return { changed: true, warnings: warningsFor(created), job: created };
    });
  }

  /** Stops a running job after its current batch; rows already done stay done. */
  async cancelJob(id: number, actor: Actor, reason?: string | null): Promise<ActionResult> {
    const jobId = parseInput(rowIdSchema, id, 'id');
    const why = parseInput(optionalReasonSchema, reason, 'reason');
    return this.act(actor, 'job.cancel', `job:${jobId}`, why, async (now, ok) => {
      const job = await this.o.store.admin.getJob(jobId);
      if (!job) throw new NotFoundError(`job ${jobId} not found`);
      if (job.status !== 'running')
        throw new ConflictError(`job ${jobId} is ${job.status}; only a running job can be cancelled`);
      if (!(await this.o.store.admin.cancelJob(jobId, now, ok({ done: job.done, total: job.total })))) {
        throw new ConflictError(`job ${jobId} finished meanwhile`);
      }
      return { changed: true, warnings: [] };
    });
  }

  private act<R extends ActionResult>(
    actor: Actor,
    action: AuditAction,
    target: string,
    reason: string | null,
    work: (now: number, ok: OkEntry) => Promise<R>,
  ): Promise<R> {
    const who = parseInput(actorSchema, actor, 'actor');
    const now = this.o.clock.now();
    return auditedAction(this.o.store.admin, this.o.logger, { actor: who, action, target, reason, now }, (ok) =>
      work(now, ok),
    );
  }

  /**
   * Whether a replay or resend job's filter matches a row old enough that its handler may run again
   * (see jobWindowCutoff). An ignore runs no handler. A replay with no status acts on pending and dead
   * rows only, as the store's job does.
   */
  private async matchesPastWindow(job: z.output<ReturnType<typeof jobInputSchema>>, now: number): Promise<boolean> {
    const windowMs = this.o.inboxWindowMs;
    if (windowMs === undefined || job.kind === 'dlq.ignore') return false;
    const cutoff = jobWindowCutoff(windowMs, now);
    if (job.filter.from !== undefined && job.filter.from >= cutoff) return false;
    const to = Math.min(job.filter.to ?? cutoff, cutoff);
    const first = { limit: 1 };
    if (job.kind === 'outbox.resend') {
      return (await this.o.store.admin.listOutbox({ ...job.filter, to }, first)).items.length > 0;
    }
    const status = job.filter.status ?? REPLAY_JOB_DEFAULT;
    return (await this.o.store.admin.listDeadLetters({ ...job.filter, status, to }, first)).items.length > 0;
  }

  private async deadLetter(id: number, now: number): Promise<DeadLetterRow> {
    const row = await this.o.store.admin.getDeadLetterById(id, now);
    if (!row) throw new NotFoundError(`dead letter ${id} not found`);
    return row;
  }

  private stateConflict(row: DeadLetterRow, verb: string, allowed: string): ConflictError {
    return new ConflictError(`dead letter ${row.id} is ${row.status}; only ${allowed} rows can be ${verb}`);
  }

  private changedMeanwhile(id: number): ConflictError {
    return new ConflictError(`dead letter ${id} changed state meanwhile; look at it again`);
  }
}
