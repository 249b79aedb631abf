import { someCause, SuretyError } from '../core/errors.js';
import type { QueryHints, SqlExecutor, SqlResult } from '../ports/sql-executor.js';

/**
 * The optimistic pass's view of its transaction. After the first failed statement nothing more is
 * sent: on MySQL a deadlock, and on SQLite some errors, end the transaction, and statements sent after
 * that would commit on their own, outside it. The pass is then rolled back and run again under
 * savepoints, even if the handler caught the error.
 */
export class StatementGate {
  /** The first statement error seen, if any (a handler may have caught it). */
  firstError: unknown;
  failed = false;
  readonly executor: SqlExecutor;

  constructor(tx: SqlExecutor) {
    this.executor = {
      query: <R>(sql: string, values?: readonly unknown[], hints?: QueryHints): Promise<SqlResult<R>> => {
        if (this.failed) return Promise.reject(new SuretyError('SURETY_STORE_FAILED', 'the batch is being retried'));
        return tx.query<R>(sql, values, hints).catch((err: unknown) => {
          if (!this.failed) {
            this.failed = true;
            this.firstError = err;
          }
          throw err;
        });
      },
    };
  }
}

/** Whether `err` is `target` or has it somewhere in its `cause` chain. */
export function causedBy(err: unknown, target: unknown): boolean {
  return someCause(err, (e) => e === target);
}
