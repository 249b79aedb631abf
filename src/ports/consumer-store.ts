import type { SqlExecutor } from './sql-executor.js';

/**
 * Dead-letter row states. pending -> replaying -> resolved; pending -> ignored (terminal, with a
 * reason); pending -> dead when the retry limit is reached (terminal until an operator acts).
 * A replaying row whose replayer died is claimable again once its lease expires, and from then on
 * reads as pending to operators (see the admin port), who may act on it.
 */
export type DeadLetterStatus = 'pending' | 'replaying' | 'resolved' | 'ignored' | 'dead';

/** Times are epoch milliseconds (UTC). */
export interface DeadLetterRow {
  readonly id: number;
  readonly messageId: string;
  readonly group: string;
  readonly topic: string;
  /** Empty when the message could not be decoded (poison). */
  readonly type: string;
  readonly key: string;
  readonly version: number;
  readonly headers: Record<string, string>;
  /** The raw body as received (UTF-8 text; undecodable bytes are kept base64 with `bodyEncoding`). */
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  readonly status: DeadLetterStatus;
  readonly attempts: number;
  readonly nextRetryAt: number | null;
  readonly lastError: string;
  readonly poison: boolean;
  readonly ignoredReason: string | null;
  /** The replayer holding the row; on a row an admin read shows as pending, one whose lease ran out. */
  readonly claimedBy: string | null;
  readonly leaseUntil: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A failed delivery or replay to record. */
export interface FailureRecord {
  readonly messageId: string;
  readonly group: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string;
  readonly version: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  readonly error: string;
  readonly poison: boolean;
  readonly now: number;
}

/** What the retry policy decides after `attempts` failures. */
export interface RetryDecision {
  readonly status: 'pending' | 'dead';
  readonly nextRetryAt: number | null;
}

export interface RecordedFailure {
  readonly id: number;
  readonly attempts: number;
  readonly status: 'pending' | 'dead';
  readonly nextRetryAt: number | null;
}

/** Inbox: one row per (message id, consumer group), written in the handler's transaction. */
export interface InboxStore {
  /** Records the message for the group in `tx`. False when it was already there (a duplicate). */
  recordInbox(tx: SqlExecutor, messageId: string, group: string, now: number): Promise<boolean>;
  /**
   * Records many messages for the group in `tx` at once. Returns the ids that were new; the others
   * were already recorded (duplicates).
   */
  recordInboxBatch(tx: SqlExecutor, messageIds: readonly string[], group: string, now: number): Promise<Set<string>>;
  /** When the group's inbox recorded the message, if it still holds it. */
  inboxRecordedAt(messageId: string, group: string): Promise<number | undefined>;
  /** Deletes at most `limit` inbox rows recorded before `before`. */
  purgeInbox(before: number, limit: number): Promise<number>;
}

/** Dead letters: failures, retried with backoff by the replay job. Every transition is a conditional update. */
export interface DeadLetterStore {
  /**
   * Inserts the row with attempts 1, or increments attempts of the existing (messageId, group) row,
   * decided by the unique key (safe under concurrent writers); then applies `decide(attempts)`.
   * A row that is resolved or ignored is reopened as a new failure.
   */
  recordDeliveryFailure(
    tx: SqlExecutor,
    failure: FailureRecord,
    decide: (attempts: number) => RetryDecision,
  ): Promise<RecordedFailure>;
  /** Compare-and-set, for one consumer group: pending rows due at `now` (and replaying rows whose lease expired) become replaying for `owner`. */
  claimDue(request: {
    owner: string;
    group: string;
    now: number;
    limit: number;
    leaseMs: number;
  }): Promise<DeadLetterRow[]>;
  /** replaying (held by owner) -> resolved. */
  markResolved(id: number, owner: string, now: number): Promise<boolean>;
  /** The same for many rows in one statement; returns how many changed. */
  markResolvedMany(ids: readonly number[], owner: string, now: number): Promise<number>;
  /** replaying (held by owner) -> pending with a new time, or dead. */
  reschedule(update: {
    id: number;
    owner: string;
    attempts: number;
    decision: RetryDecision;
    error: string;
    now: number;
  }): Promise<boolean>;
  /** pending or dead -> ignored, with a reason. */
  ignore(id: number, reason: string, now: number): Promise<boolean>;
  getDeadLetter(messageId: string, group: string): Promise<DeadLetterRow | undefined>;
  countDeadLetters(group?: string): Promise<Record<DeadLetterStatus, number>>;
  /**
   * Deletes at most `limit` settled rows (resolved or ignored) last changed before `before`, of any
   * group, with their history rows, in one transaction; returns how many rows went. Pending,
   * replaying and dead rows are never deleted; rows another transaction holds are skipped.
   */
  purgeSettledDeadLetters(before: number, limit: number): Promise<number>;
}

/** One version guard: the highest version a consumer group applied for a key within a scope. */
export interface VersionGuardKey {
  readonly group: string;
  /** What the versions are of, e.g. the local table or the message type (at most 200 characters). */
  readonly scope: string;
  /** The business key (at most 200 characters). */
  readonly key: string;
}

/** Version guards of handlers that must never apply an older state than they applied before (fetchBack). */
export interface VersionGuardStore {
  /**
   * In `tx`: raises the guard to `version` (a safe integer) when it has none or a lower one, and
   * tells whether it did. It compares with the latest committed guard, never a stale snapshot: a
   * concurrent raise of the same guard waits until the other transaction ends (or fails, where the
   * isolation level forbids reading past the snapshot). The guard row stays locked until `tx` ends,
   * and a rollback undoes the raise.
   */
  raiseVersion(tx: SqlExecutor, guard: VersionGuardKey, version: number): Promise<boolean>;
  /** The guard's committed version, undefined when it has none. */
  guardedVersion(guard: VersionGuardKey): Promise<number | undefined>;
}
