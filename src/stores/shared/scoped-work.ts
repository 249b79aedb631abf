import { TransactionEndedError } from '../../core/errors.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';

/**
 * Runs a transaction's `work` on `tx`, and refuses statements issued after `work` settled. A statement
 * still being chained when `work` ended (a branch of a rejected `Promise.all`, an unawaited call)
 * would otherwise run after COMMIT or ROLLBACK: outside the transaction, or inside the next borrower's.
 */
export async function runScoped<T>(tx: SqlExecutor, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  let ended = false;
  const scoped: SqlExecutor = {
    query: (sql, values, hints) => (ended ? Promise.reject(new TransactionEndedError()) : tx.query(sql, values, hints)),
  };
  try {
    return await work(scoped);
  } finally {
    ended = true;
  }
}
