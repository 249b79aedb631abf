import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import type { OwnConnection } from '../sql/own-connection.js';
import { isDeadlock, isLockWaitTimeout, storeError } from './errors.js';
import { mysqlExecutor, mysqlTransaction, type MysqlPoolLike } from './executor.js';

/**
 * InnoDB picks a deadlock victim among concurrent claimers and settlers and rolls its statement or
 * transaction back whole; running it again is the documented remedy. Only Surety's own statements
 * and transactions are retried, never a caller's.
 */
async function retryDeadlocks<T>(work: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (err) {
      // A lock wait timeout rolls back only the statement.
      if (i >= attempts || !(isDeadlock(err) || isLockWaitTimeout(err))) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 10));
    }
  }
}

/**
 * The store's own connection on MySQL: deadlock victims retried, driver errors as StoreError, its
 * transactions in READ COMMITTED, where locking reads take no gap locks, so a claim or a range
 * never blocks the application's inserts or consumers' writes.
 */
export function mysqlConnection(pool: MysqlPoolLike): OwnConnection {
  const run = async (text: string, values?: readonly unknown[]): Promise<SqlResult> => {
    try {
      return await retryDeadlocks(() => mysqlExecutor(pool).query(text, values));
    } catch (err) {
      throw storeError(err);
    }
  };
  const transaction = async <T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> => {
    try {
      return await retryDeadlocks(() => mysqlTransaction(pool, work, 'READ COMMITTED'));
    } catch (err) {
      throw storeError(err);
    }
  };
  return { run, runRange: (text, values) => transaction((tx) => tx.query(text, values)), transaction };
}
