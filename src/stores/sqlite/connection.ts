import { StoreError } from '../../core/errors.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import type { OwnConnection } from '../sql/own-connection.js';
import { storeError } from './errors.js';
import { sqliteExecutor, sqliteTransaction, withDatabaseLock, type SqliteDatabaseLike } from './executor.js';

/**
 * The store's own connection on SQLite: every statement and transaction under the database lock,
 * driver errors as StoreError. In-process there are no range statements to run differently: each
 * is one statement under the lock.
 */
export function sqliteConnection(db: SqliteDatabaseLike): OwnConnection {
  const run = async (text: string, values?: readonly unknown[]): Promise<SqlResult> => {
    try {
      // One statement in autocommit, so it is its own transaction.
      return await withDatabaseLock(db, async () => {
        if (db.inTransaction) {
          throw new StoreError(
            'SQLite: a transaction is open on this Database outside sqliteTransaction(); the store will not run inside it',
          );
        }
        return sqliteExecutor(db).query(text, values);
      });
    } catch (err) {
      throw storeError(err);
    }
  };
  // A transaction of the store's own under the database lock; refuses to nest in a foreign one.
  const transaction = async <T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> => {
    try {
      return await sqliteTransaction(db, work);
    } catch (err) {
      throw storeError(err);
    }
  };
  return { run, runRange: run, transaction };
}
