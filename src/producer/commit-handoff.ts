import type { OutboxRow, OutboxStore } from '../ports/outbox-store.js';
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
  /** How many of `leased` the check before the commit covered; a later one is let go, never handed. */
  checked: number;
  /**
   * A checked row was no longer in the transaction, or the check failed: publishing from memory
   * could announce what was never committed. Nothing is handed over.
   */
  undone: boolean;
  /** Set once the commit's rows were handed over: a leased row added later is let go on its own. */
  handedOver: boolean;
}

export const newTransactionRows = (): TransactionRows => ({
  leased: [],
  unleased: false,
  checked: 0,
  undone: false,
  handedOver: false,
});

/**
 * Checks, last thing before the commit, that every leased row is still in `tx`. Any statement may
 * have undone some: a rollback to a savepoint, ABORT, a procedure that rolls back (MySQL), PREPARE
 * TRANSACTION (PostgreSQL), a ROLLBACK on the driver's own handle, an error after which MySQL rolls
 * the whole transaction back. Asking the database covers them all. The statement is issued before
 * the COMMIT and need not be awaited first: on a pipelined connection both share one round trip.
 * Never rejects.
 */
export async function checkLeased(
  store: Pick<OutboxStore, 'countRows'>,
  tx: SqlExecutor,
  rows: TransactionRows,
): Promise<void> {
  const checked = [...rows.leased];
  rows.checked = checked.length;
  if (checked.length === 0) return;
  // SQLite gives a seq undone by a savepoint again: an add retried there with its own id would count twice.
  if (new Set(checked.map((r) => `${r.seq}:${r.messageId}`)).size !== checked.length) {
    rows.undone = true;
    return;
  }
  try {
    if ((await store.countRows(tx, checked)) !== checked.length) rows.undone = true;
  } catch {
    // The transaction was failing already (aborted, cancelled, timed out): a failed statement aborts a
    // PostgreSQL transaction, so its COMMIT rolls back and says so. The handoff just stands back.
    rows.undone = true;
  }
}
