import type { OutboxRow } from '../ports/outbox-store.js';
import type { QueryHints, SqlExecutor } from '../ports/sql-executor.js';

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
   * A ROLLBACK or ABORT statement ran in the transaction, or a statement failed: a leased row may have
   * been undone (a rollback to a savepoint; MySQL rolls a whole transaction back on some errors), and
   * publishing it from memory would announce what was never committed. Nothing is handed over then.
   */
  maybeUndone: boolean;
  /** Set once the commit's rows were handed over: a leased row added later is let go on its own. */
  handedOver: boolean;
}

const UNDOING = /\b(rollback|abort)\b/i;

/** `tx`, noting any statement that may undo part of the transaction. */
export function watchForUndoing(tx: SqlExecutor, rows: TransactionRows): SqlExecutor {
  return {
    query<R>(text: string, values?: readonly unknown[], hints?: QueryHints) {
      // A false alarm (the word in a literal, a failure the caller expected) only costs the handoff.
      if (UNDOING.test(text)) rows.maybeUndone = true;
      return tx.query<R>(text, values, hints).catch((err: unknown) => {
        rows.maybeUndone = true;
        throw err;
      });
    },
  };
}
