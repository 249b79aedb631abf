import type { DeadLetterRow, DeadLetterStatus } from './consumer-store.js';
import type { OutboxRow, OutboxStats, OutboxStatus } from './outbox-store.js';

/**
 * The admin concern of a store: what operators read (lists, lineage, overview, relay heartbeats,
 * audit) and the actions they take. Every action is a conditional update decided by the number of
 * affected rows, and writes its history row (and, when given, its audit entry) in the same
 * transaction. Times are epoch milliseconds.
 *
 * Dead letters are read, filtered, counted and acted on by their status as of a time the caller
 * gives (`now`, the caller's clock): a `replaying` row whose lease has ended then is `pending`, due
 * since the lease ended (its replayer died), with the expired claim kept in `claimedBy` and
 * `leaseUntil`. A row under a live lease is `replaying`, and operator actions refuse it.
 */

/** Filters shared by lists and bulk jobs. Text filters are exact, but `error` (a case-insensitive substring). */
export interface OutboxFilter {
  readonly status?: readonly OutboxStatus[];
  readonly type?: string;
  readonly key?: string;
  readonly topic?: string;
  readonly error?: string;
  /** createdAt >= from */
  readonly from?: number;
  /** createdAt < to */
  readonly to?: number;
}

export interface DeadLetterFilter {
  readonly status?: readonly DeadLetterStatus[];
  readonly type?: string;
  readonly key?: string;
  readonly group?: string;
  readonly error?: string;
  readonly poison?: boolean;
  /** createdAt >= from */
  readonly from?: number;
  /** createdAt < to */
  readonly to?: number;
}

/** Keyset paging, newest first: rows inserted while a client pages never shift the pages it has not read. */
export interface PageRequest {
  readonly limit: number;
  /** Only rows with an id (outbox: seq) below this one: the previous page's `nextBefore`. */
  readonly before?: number;
}

export interface Page<T> {
  readonly items: T[];
  /** Pass as `before` for the next page; null on the last page. */
  readonly nextBefore: number | null;
}

/** One relay attempt that did not end in a confirm, or an operator's resend. */
export interface OutboxAttempt {
  readonly at: number;
  /** The row's attempt count after this event (0 for a resend, which resets it). */
  readonly attempt: number;
  readonly outcome: 'failed' | 'dead' | 'resent';
  readonly error: string | null;
  /** Relay id for failures, operator for resends. */
  readonly actor: string | null;
  /** For a resend: when the broker had confirmed the copy it replaced (null if none was confirmed). */
  readonly confirmedAt: number | null;
}

export type DeadLetterEventKind =
  | 'failed' // a delivery failed and the row was written or incremented
  | 'dead' // the retry limit was reached (or a permanent error)
  | 'replay_failed' // a replay failed and was rescheduled
  | 'resolved' // a replay succeeded (or found the message already handled)
  | 'replay_requested' // an operator (or a bulk job) made the row due now
  | 'ignored'
  | 'edited';

export interface DeadLetterEvent {
  readonly at: number;
  readonly kind: DeadLetterEventKind;
  /** The row's attempts after this event. */
  readonly attempt: number;
  /** The error for failures, the reason for ignores, the previous body for edits. */
  readonly detail: string | null;
  /** Operator, bulk job (`job:<id>`) or replayer owner; null for the consumer's own failures. */
  readonly actor: string | null;
}

export interface Lineage {
  readonly messageId: string;
  readonly outbox: (OutboxRow & { readonly history: OutboxAttempt[] }) | null;
  /** Consumer groups whose inbox holds the message. */
  readonly inbox: { readonly group: string; readonly recordedAt: number }[];
  readonly deadLetters: (DeadLetterRow & { readonly history: DeadLetterEvent[] })[];
}

export interface RelayHeartbeat {
  readonly relayId: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: number;
  /** Time of the relay's last claim query (with or without rows); null before its first. */
  readonly lastClaimedAt: number | null;
  readonly lastSeenAt: number;
}

/** A relay that stopped gracefully: its last heartbeat and when it stopped. */
export interface StoppedRelay extends RelayHeartbeat {
  readonly stoppedAt: number;
}

export interface Overview {
  readonly outbox: OutboxStats;
  readonly deadLetters: Record<DeadLetterStatus, number>;
  /** Rows left `replaying` by a replayer whose lease has expired (it died); counted as pending. */
  readonly expiredLeases: number;
  /**
   * Dead letters due for a retry now, by consumer group, longest waiting first (at most 50 groups):
   * pending ones whose time has come, expired leases included (due since the lease ended). A
   * running replayer of the group takes them within its interval.
   */
  readonly dueRetries: {
    readonly group: string;
    readonly count: number;
    /** Of `count`, those under an expired lease. */
    readonly expiredLeases: number;
    readonly oldestDueAt: number;
  }[];
  /** Exact up to 100,000 rows; beyond, 100,000 with `inboxSizeExact` false (a polled overview must not scan it all). */
  readonly inboxSize: number;
  readonly inboxSizeExact: boolean;
  /** Last 60 minutes, one bucket per minute (start time), oldest first; empty minutes included. */
  readonly throughput: { readonly minute: number; readonly sent: number; readonly consumed: number }[];
  /** Open dead letters (pending, replaying, dead) grouped by type, group and the error's first line. */
  readonly deadLetterGroups: {
    readonly type: string;
    readonly group: string;
    readonly error: string;
    readonly count: number;
    readonly oldestAt: number;
  }[];
  /** Relays that have not stopped: running, or gone without stopping (their heartbeat is stale). */
  readonly relays: RelayHeartbeat[];
  /** The last few relays that stopped gracefully, the latest first (kept about a day after a later stop). */
  readonly stoppedRelays: StoppedRelay[];
}

export interface Actor {
  /** Token name or CLI user; never a secret. */
  readonly name: string;
  readonly role: 'viewer' | 'operator';
}

export interface AuditEntry {
  readonly id: number;
  readonly at: number;
  readonly actor: string;
  readonly role: string;
  /** e.g. `dlq.replay`, `dlq.ignore`, `dlq.edit`, `outbox.resend`, `job.create`, `job.cancel`. */
  readonly action: string;
  /** What it acted on: `dlq:<id>`, `outbox:<messageId>`, `job:<id>`. */
  readonly target: string;
  readonly reason: string | null;
  readonly outcome: 'ok' | 'refused' | 'failed' | 'noop';
  readonly detail: Record<string, unknown> | null;
}

export type NewAuditEntry = Omit<AuditEntry, 'id'>;

export interface AuditFilter {
  readonly actor?: string;
  readonly action?: string;
  readonly target?: string;
  readonly from?: number;
  readonly to?: number;
}

export type JobKind = 'dlq.replay' | 'dlq.ignore' | 'outbox.resend';
export type JobStatus = 'running' | 'done' | 'failed' | 'cancelled';

/**
 * A bulk action by filter. It works through the rows matching `filter` with id <= `maxId` (fixed at
 * creation, so rows arriving later are not swept in) in ascending id order; `cursor` is the last id
 * done. Each batch moves its rows and the cursor in one transaction, so a job resumed after a crash
 * never acts on a row twice.
 */
export interface AdminJob {
  readonly id: number;
  readonly kind: JobKind;
  readonly filter: DeadLetterFilter | OutboxFilter;
  readonly reason: string | null;
  readonly actor: string;
  readonly status: JobStatus;
  readonly total: number;
  /** Rows examined so far (acted on or skipped because their state no longer allowed it). */
  readonly done: number;
  /** Rows actually changed. */
  readonly changed: number;
  readonly cursor: number;
  readonly maxId: number;
  readonly ratePerSecond: number;
  readonly owner: string | null;
  readonly leaseUntil: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly error: string | null;
}

export interface NewJob {
  readonly kind: JobKind;
  readonly filter: DeadLetterFilter | OutboxFilter;
  readonly reason: string | null;
  readonly actor: string;
  readonly ratePerSecond: number;
  readonly now: number;
}

export interface ActionContext {
  readonly actor: string;
  readonly now: number;
  /**
   * The action's `ok` audit entry. The store inserts it in the action's own transaction when the
   * row changes (and not when nothing changed), so no change is ever left without its entry, nor an
   * entry without its change: if the insert fails, the action rolls back and the call rejects.
   * Without it, no audit entry is written.
   * @example
   * const audit = { at: now, actor: 'alice', role: 'operator', action: 'dlq.replay', target: 'dlq:7',
   *   reason: 'fixed', outcome: 'ok', detail: null } as const;
   * if (!(await store.admin.requestReplay(7, { actor: 'alice', now, audit }))) console.log('row changed meanwhile');
   */
  readonly audit?: NewAuditEntry;
}

/** How {@link AdminStore.editDeadLetter} edits. */
export interface EditOptions {
  /**
   * Also make the row due now (as {@link AdminStore.requestReplay}) in the same transaction: the row
   * must then be pending, dead or ignored, and either both the edit and the replay happen or neither.
   */
  readonly replay?: boolean;
}

/** Relay heartbeats (`store.heartbeats`): written by relays, read by operators and the doctor. */
export interface RelayHeartbeatStore {
  /** Upserts the relay's heartbeat row (called by the relay every few seconds); a stopped row runs again. */
  recordHeartbeat(heartbeat: RelayHeartbeat): Promise<void>;
  /**
   * A graceful stop: marks the relay's row stopped at `at`, so operators and the doctor tell a relay
   * that stopped from one that never ran, and drops rows that stopped more than a day before `at`.
   */
  recordRelayStopped(relayId: string, at: number): Promise<void>;
  /** Heartbeats of relays that have not stopped (see {@link Overview.relays}). */
  relays(): Promise<RelayHeartbeat[]>;
}

export interface AdminStore {
  listOutbox(filter: OutboxFilter, page: PageRequest): Promise<Page<OutboxRow>>;
  /**
   * Statuses (in the rows and in `filter.status`) are as of `now`, by default the current time.
   * @example
   * const orphans = await store.admin.listDeadLetters({ status: ['pending'], group: 'billing' }, { limit: 50 }, clock.now());
   */
  listDeadLetters(filter: DeadLetterFilter, page: PageRequest, now?: number): Promise<Page<DeadLetterRow>>;
  /** The row with its status as of `now` (default: the current time). */
  getDeadLetterById(id: number, now?: number): Promise<DeadLetterRow | undefined>;
  /**
   * Undefined when no outbox row, inbox record or dead letter knows the id. Dead letters have their
   * status as of `now` (default: the current time).
   */
  lineage(messageId: string, now?: number): Promise<Lineage | undefined>;
  overview(now: number): Promise<Overview>;

  /**
   * pending, dead or ignored (as of `ctx.now`) -> pending, due now. False when the row is replaying
   * under a live lease, resolved or missing.
   */
  requestReplay(id: number, ctx: ActionContext): Promise<boolean>;
  /** pending or dead (as of `ctx.now`) -> ignored with a reason. */
  ignoreDeadLetter(id: number, reason: string, ctx: ActionContext): Promise<boolean>;
  /**
   * Replaces the body of a row not replaying under a live lease; the previous body goes into the
   * history. With `options.replay`, edit and replay are one transaction (see {@link EditOptions}).
   */
  editDeadLetter(id: number, body: string, ctx: ActionContext, options?: EditOptions): Promise<boolean>;
  /** Any status -> pending, due now, attempts reset to 0 (history kept), same message id. */
  resendOutbox(messageId: string, ctx: ActionContext): Promise<boolean>;

  appendAudit(entry: NewAuditEntry): Promise<number>;
  listAudit(filter: AuditFilter, page: PageRequest): Promise<Page<AuditEntry>>;

  /**
   * Counts the matching rows (dead letters by their status as of `job.now`) and fixes maxId; a job
   * matching nothing is created done, and a replay whose filter names no status is stored as
   * pending, dead. `audit`, given the created job (its id names the target), returns the `ok` audit
   * entry inserted in the same transaction.
   */
  createJob(job: NewJob, audit?: (created: AdminJob) => NewAuditEntry): Promise<AdminJob>;
  getJob(id: number): Promise<AdminJob | undefined>;
  listJobs(page: PageRequest): Promise<Page<AdminJob>>;
  /**
   * A running job whose lease is free or expired (or already `owner`'s) becomes `owner`'s until
   * now + leaseMs; with `onlyId`, only that job is considered.
   */
  claimJob(owner: string, now: number, leaseMs: number, onlyId?: number): Promise<AdminJob | undefined>;
  /** Drops `owner`'s lease on a running job (graceful stop), so another runner takes it at once. */
  releaseJob(id: number, owner: string, now: number): Promise<boolean>;
  /**
   * One batch of at most `limit` rows, in one transaction, only while `owner` holds the job: acts on
   * each row (conditional update plus history row; dead letters by their status as of `now`),
   * advances cursor, done and changed, renews the lease for leaseMs from the batch's commit, and sets
   * status done when no row is left. A row another transaction holds is not waited for: the batch
   * stops before it and a later batch takes it up. Undefined when the owner lost the job.
   */
  runJobBatch(jobId: number, owner: string, limit: number, now: number, leaseMs: number): Promise<AdminJob | undefined>;
  /** running -> cancelled; `audit` is inserted in the same transaction, only if the job was cancelled. */
  cancelJob(id: number, now: number, audit?: NewAuditEntry): Promise<boolean>;
  /** running -> failed with an error (e.g. a filter that no longer parses); with `owner`, only while it holds the job. */
  failJob(id: number, error: string, now: number, owner?: string): Promise<boolean>;
}

/** Convenience for callers that only need the counts. */
export type { DeadLetterStatus, OutboxStatus };
