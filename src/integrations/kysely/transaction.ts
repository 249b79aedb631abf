import { PostgresAdapter, type Kysely, type Transaction } from 'kysely';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { runOrmTransaction, type CommitAnnouncer, type OrmTransactions } from '../shared/orm-transaction.js';
import { executorForKysely } from './executor.js';

/** Kysely's transactions on `db`, as the shared ORM core runs them. */
export function kyselyTransactions<DB>(db: Kysely<DB>): OrmTransactions<Transaction<DB>> {
  return {
    dialect: isPostgres(db) ? 'postgres' : 'other',
    run: (work) => db.transaction().execute(work),
    executor: (trx) => executorForKysely(trx),
  };
}

/**
 * Runs `work` in a Kysely transaction on `db` and, once it committed, tells the outbox's relays in
 * this process (and, with `notifyAfterCommit`, elsewhere) without waiting for a poll: Kysely has no
 * commit hook, so this helper is where the commit is known. A rollback announces nothing. On
 * PostgreSQL a transaction aborted by a failed statement whose error was caught is rolled back
 * with TransactionAbortedError, never reported as committed.
 * @example
 * await kyselyTransaction(db, outbox, async (trx, tx) => {
 *   await trx.insertInto('orders').values({ id, total }).execute();
 *   await outbox.add(tx, { type: 'order.created', key: id, payload: { id, total } });
 * });
 */
export async function kyselyTransaction<DB, T>(
  db: Kysely<DB>,
  outbox: CommitAnnouncer,
  work: (trx: Transaction<DB>, tx: SqlExecutor) => Promise<T>,
): Promise<T> {
  const result = await runOrmTransaction(kyselyTransactions(db), work);
  outbox.committed();
  return result;
}

/** Whether `db` speaks PostgreSQL; unknown dialects are checked as if they did (one cheap statement). */
function isPostgres(db: object): boolean {
  const executor = (db as { getExecutor?: () => { adapter?: unknown } }).getExecutor?.();
  return executor?.adapter === undefined || executor.adapter instanceof PostgresAdapter;
}
