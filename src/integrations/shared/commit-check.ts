import { TransactionAbortedError } from '../../core/errors.js';
import type { OrmExecutor } from './orm-executor.js';

/**
 * Refuses to let an ORM commit a transaction the database already rolled back, which ORMs report as
 * committed. MySQL: a deadlock the executor saw (InnoDB rolled everything back, even if the error was
 * caught). PostgreSQL: once a statement has failed (its error caught), the server answers COMMIT with
 * ROLLBACK and no error; a cheap statement before the commit fails with 25P02 in that aborted
 * transaction, which the ORM executor turns into TransactionAbortedError.
 */
export async function refuseAbortedCommit(dialect: string, tx: OrmExecutor): Promise<void> {
  tx.refuseAfterRollback('nothing of it was written');
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
