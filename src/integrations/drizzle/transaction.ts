import type { SqlExecutor } from '../../ports/sql-executor.js';
import { sqliteTransaction } from '../../stores/sqlite/executor.js';
import { runOrmTransaction, type CommitAnnouncer, type OrmTransactions } from '../shared/orm-transaction.js';
import { drizzleDialect, executorForDrizzle, sqliteClient } from './executor.js';

/** What `drizzleTransaction` hands its work: the transaction of `db.transaction`, or on SQLite the database itself. */
export type DrizzleTransactionOf<D> = D extends { all: unknown; run: unknown }
  ? D
  : D extends { transaction(work: (tx: infer X) => Promise<unknown>, ...config: never[]): unknown }
    ? X
    : D;

interface Transacting {
  transaction<T>(work: (tx: object) => Promise<T>): Promise<T>;
}

/**
 * Drizzle's transactions on `db`, as the shared ORM core runs them. better-sqlite3's are synchronous
 * and cannot await anything, so on SQLite the transaction is Surety's own (BEGIN IMMEDIATE on the
 * database's connection) and Drizzle's statements on `db` run inside it.
 */
export function drizzleTransactions(db: object): OrmTransactions<object> {
  const dialect = drizzleDialect(db);
  return {
    dialect,
    run:
      dialect === 'sqlite'
        ? (work) => sqliteTransaction(sqliteClient(db), () => work(db))
        : (work) => (db as Transacting).transaction(work),
    executor: (trx) => executorForDrizzle(trx),
  };
}

/**
 * Runs `work` in a Drizzle transaction on `db` and, once it committed, tells the outbox's relays in
 * this process (and, with `notifyAfterCommit`, elsewhere) without waiting for a poll: Drizzle has no
 * commit hook, so this helper is where the commit is known. A rollback announces nothing. On
 * PostgreSQL a transaction aborted by a failed statement whose error was caught is rolled back with
 * TransactionAbortedError, never reported as committed.
 * @example
 * await drizzleTransaction(db, outbox, async (trx, tx) => {
 *   await trx.insert(orders).values({ id, total });
 *   await outbox.add(tx, { type: 'order.created', key: id, payload: { id, total } });
 * });
 */
export async function drizzleTransaction<D extends object, T>(
  db: D,
  outbox: CommitAnnouncer,
  work: (trx: DrizzleTransactionOf<D>, tx: SqlExecutor) => Promise<T>,
): Promise<T> {
  const result = await runOrmTransaction(drizzleTransactions(db), (trx, tx) =>
    work(trx as DrizzleTransactionOf<D>, tx),
  );
  outbox.committed();
  return result;
}
