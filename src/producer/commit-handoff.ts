import type { OutboxRow } from '../ports/outbox-store.js';
import type { SqlExecutor } from '../ports/sql-executor.js';

/**
 * A relay in this process that publishes rows of {@link Outbox.transaction} right after their commit,
 * without claiming them: they were inserted already claimed by it, for `leaseMs`. Rows it does not
 * take are made due at once for any relay; rows of a process that dies fall due when the lease ends.
 */
export interface CommitHandoff {
  readonly owner: string;
  readonly leaseMs: number;
  /** Starts publishing what it can take now; returns the rows it did not take. */
  take(rows: readonly OutboxRow[]): readonly OutboxRow[];
}

/** What one {@link Outbox.transaction} wrote, for its handoff after the commit. */
export interface TransactionRows {
  /** Rows inserted claimed by the handoff's owner. */
  readonly leased: OutboxRow[];
  /** A row was inserted unclaimed: relays must be told of the commit. */
  unleased: boolean;
  /**
   * A ROLLBACK statement ran inside the transaction (to a savepoint): a leased row may have been undone
   * with it, and publishing it would announce what was never committed. Nothing is handed over then.
   */
  partlyUndone: boolean;
}

/** `tx`, noting any statement that rolls back part of the transaction. */
export function watchForRollbacks(tx: SqlExecutor, rows: TransactionRows): SqlExecutor {
  return {
    query(text, values, hints) {
      // A false alarm (the word in a literal) only costs this transaction its handoff.
      if (/\brollback\b/i.test(text)) rows.partlyUndone = true;
      return tx.query(text, values, hints);
    },
  };
}
