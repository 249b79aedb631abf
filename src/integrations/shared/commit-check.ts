import { TransactionAbortedError } from '../../core/errors.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';

/**
 * Refuses to let an ORM commit a PostgreSQL transaction that is already aborted. Once a statement
 * has failed (its error caught), PostgreSQL answers COMMIT with ROLLBACK and no error, and ORMs
 * resolve: the caller would believe written what was undone. A cheap statement before the commit
 * fails with 25P02 in an aborted transaction, which the ORM executor turns into
 * TransactionAbortedError; other dialects need no check.
 */
export async function refuseAbortedCommit(dialect: string, tx: SqlExecutor): Promise<void> {
  if (dialect !== 'postgres') return;
  try {
    await tx.query('SELECT 1');
  } catch (err) {
    if (!(err instanceof TransactionAbortedError)) throw err;
    throw new TransactionAbortedError(
      'PostgreSQL would roll the transaction back at COMMIT: a statement in it failed and its error was caught, so nothing of it was written (use a savepoint, e.g. a nested ORM transaction, to survive a failing statement)',
      { cause: err },
    );
  }
}
