import type { SqlExecutor } from './sql-executor.js';

export type OutboxStatus = 'pending' | 'sent' | 'dead';

/** A row as the outbox stores it. Times are epoch milliseconds (UTC). */
export interface OutboxRow {
  readonly seq: number;
  readonly messageId: string;
  readonly type: string;
  readonly key: string;
  readonly topic: string;
  readonly orderingKey: string;
  readonly version: number;
  readonly headers: Record<string, string>;
  readonly payload: string;
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  readonly createdAt: number;
  readonly status: OutboxStatus;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly claimedBy: string | null;
  readonly lastError: string | null;
  readonly sentAt: number | null;
}

export type NewOutboxRow = Pick<
  OutboxRow,
  | 'messageId'
  | 'type'
  | 'key'
  | 'topic'
  | 'orderingKey'
  | 'version'
  | 'headers'
  | 'payload'
  | 'traceparent'
  | 'tracestate'
  | 'createdAt'
>;

export interface InsertResult {
  /** False when a row with the same (type, key) already existed; nothing was written. */
  readonly inserted: boolean;
  /** The id of the row that holds this business event: the new one, or the existing one. */
  readonly messageId: string;
}

export interface InsertOptions {
  readonly ordered: boolean;
  /**
   * Default true: the insert itself signals relays elsewhere at commit (PostgreSQL: NOTIFY in the
   * statement). False leaves that to {@link OutboxWriter.notifyCommitted} after the commit.
   */
  readonly notify?: boolean;
}

export interface ClaimRequest {
  readonly owner: string;
  readonly limit: number;
  readonly now: number;
  /** Claimed rows are not due again until `now + leaseMs`; a crashed relay's claims expire then. */
  readonly leaseMs: number;
  /** Only claim the first unsent row of each ordering key. */
  readonly ordered: boolean;
}

export interface FailureUpdate {
  readonly seq: number;
  readonly owner: string;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly dead: boolean;
  readonly error: string;
  /** When the attempt failed, for its history row; the store's clock when absent. */
  readonly now?: number;
  /**
   * False for a failure that says nothing about the message (the broker connection was lost, the
   * transport closed): `attempts` is the row's own, unchanged, `dead` is false, and no history row is
   * written; the row is only made due again at `nextAttemptAt`. Default true.
   */
  readonly charged?: boolean;
}

export interface OutboxStats {
  readonly pending: number;
  readonly sent: number;
  readonly dead: number;
  /** createdAt of the oldest pending row, or null. */
  readonly oldestPendingAt: number | null;
}

/** Writing side: runs inside the caller's transaction. */
export interface OutboxWriter {
  insert(tx: SqlExecutor, row: NewOutboxRow, options: InsertOptions): Promise<InsertResult>;
  /**
   * Optional: signals relays elsewhere that rows were committed, outside any transaction, best effort.
   * Calls while a signal is in flight fold into one more after it (PostgreSQL: one NOTIFY at a time).
   */
  notifyCommitted?(): void;
}

/**
 * Rows claimed as row locks of a transaction left open until `settle` or `release`: claiming writes
 * nothing, and a relay that dies takes its locks with its connection. Settle or release exactly once.
 */
export interface LockedBatch {
  readonly rows: readonly OutboxRow[];
  /**
   * Marks `sent` rows sent at `now` and records `failures` (the lock is the claim: no owner check,
   * instead a row must still have the attempts the failure started from), then commits. Returns the seqs of the failures recorded: a row another relay changed meanwhile
   * (the lock was lost) keeps that relay's outcome.
   */
  settle(sent: readonly number[], failures: readonly FailureUpdate[], now: number): Promise<readonly number[]>;
  /** Rolls back: every row is as it was before the claim. Safe after a failed settle. */
  release(): Promise<void>;
}

/** Relay side: claims, settles and purges rows on the store's own connections. */
export interface OutboxRelayStore {
  claim(request: ClaimRequest): Promise<OutboxRow[]>;
  /**
   * Optional: claims due rows as a {@link LockedBatch}; `leaseMs` bounds how long the transaction may
   * sit idle before the database ends it. Stores that have it (PostgreSQL) make a claim a read.
   */
  claimLocked?(request: Omit<ClaimRequest, 'owner'>): Promise<LockedBatch>;
  /** Marks pending rows sent. Returns how many changed. */
  markSent(seqs: readonly number[], now: number): Promise<number>;
  /**
   * Records a failed attempt (and its history row), only while `owner` still holds the claim. An
   * uncharged failure (`charged: false`) only reschedules the row and releases the claim.
   */
  recordFailure(update: FailureUpdate): Promise<boolean>;
  /** Makes rows claimed by `owner` due again now (graceful shutdown). */
  release(owner: string, seqs: readonly number[], now: number): Promise<number>;
  /** Deletes at most `limit` sent rows with sentAt < `before`, with their attempt history. Returns how many. */
  purgeSent(before: number, limit: number): Promise<number>;
  stats(): Promise<OutboxStats>;
  /** Takes or renews a named lease (one purger at a time). True when `owner` holds it. */
  acquireLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean>;
  /** Subscribes to commit notifications (PostgreSQL LISTEN). Undefined where unsupported. */
  listenForCommits?(onCommit: () => void, onError: (err: unknown) => void): Promise<() => Promise<void>>;
}

export interface OutboxAdmin {
  get(messageId: string): Promise<OutboxRow | undefined>;
}

/** The outbox concern of a store (`store.outbox`): written by producers, claimed and settled by relays. */
export interface OutboxStore extends OutboxWriter, OutboxRelayStore, OutboxAdmin {
  /** Fully qualified name of the outbox table, for operators and tests. */
  readonly outboxTable: string;
  /**
   * Runs `work` in a transaction on the store's own connection (the store's `transaction`); commits or
   * rolls back and rethrows.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}
