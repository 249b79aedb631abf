import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { AsyncMutex } from '../../stores/sql/async-mutex.js';
import { refuseAbortedCommit } from '../shared/commit-check.js';
import type { CommitAnnouncer, OrmTransactions } from '../shared/orm-transaction.js';
import { endTransaction, executorForTypeorm, queryRunnerOf, typeormDialect } from './executor.js';

/** One at a time per SQLite data source: its one query runner would nest a second transaction in the first. */
const sqliteTurns = new WeakMap<DataSource, AsyncMutex>();

/** TypeORM's transactions on `dataSource`, as the shared ORM core runs them. */
export function typeormTransactions(dataSource: DataSource): OrmTransactions<EntityManager> {
  const dialect = typeormDialect(dataSource);
  // The executor ends with the work, whose statements the shared core drained before this commit.
  const transaction = <T>(work: (manager: EntityManager) => Promise<T>) =>
    dataSource.transaction(async (manager) => {
      try {
        return await work(manager);
      } finally {
        endTransaction(queryRunnerOf(manager));
      }
    });
  let turns = sqliteTurns.get(dataSource);
  if (dialect === 'sqlite' && !turns) sqliteTurns.set(dataSource, (turns = new AsyncMutex()));
  return {
    dialect,
    run: turns ? (work) => turns.run(() => transaction(work)) : transaction,
    executor: (manager) => executorForTypeorm(manager),
  };
}

/** The outboxes to announce the running transaction of each hooked query runner to. */
const announcing = new WeakMap<QueryRunner, Set<CommitAnnouncer>>();

/**
 * The executor of a TypeORM transaction, for `outbox.add` inside `dataSource.transaction(...)` (or
 * a query runner's own `startTransaction`). The runner's commit is hooked: it first waits for the
 * statements issued on this executor, and on PostgreSQL refuses to commit a transaction a caught
 * failed statement aborted (TransactionAbortedError; TypeORM then rolls back). Given `outbox`, the
 * commit announces itself to it (a rollback announces nothing), so you never call `outbox.committed()`.
 * @example
 * await dataSource.transaction(async (manager) => {
 *   await manager.insert('orders', { id, total });
 *   await outbox.add(typeormExecutor(manager, outbox), { type: 'order.created', key: id, payload: { id, total } });
 * });
 */
export function typeormExecutor(manager: EntityManager, outbox?: CommitAnnouncer): SqlExecutor {
  const tx = executorForTypeorm(manager);
  const runner = queryRunnerOf(manager);
  if (!announcing.has(runner)) hookCommit(runner, typeormDialect(manager));
  if (outbox) announcing.get(runner)!.add(outbox);
  return tx;
}

/**
 * Wraps the runner's commit and rollback once. Only the outermost commit is the real one: a nested
 * `manager.transaction` (depth above 1) only releases a savepoint.
 */
function hookCommit(runner: QueryRunner, dialect: string): void {
  const outboxes = new Set<CommitAnnouncer>();
  announcing.set(runner, outboxes);
  const commit = runner.commitTransaction.bind(runner);
  const rollback = runner.rollbackTransaction.bind(runner);
  const depth = () => (runner as { transactionDepth?: number }).transactionDepth ?? 1;
  runner.commitTransaction = async () => {
    if (depth() > 1) return commit();
    const tx = executorForTypeorm(runner.manager);
    await tx.drained();
    await refuseAbortedCommit(dialect, tx); // throws: dataSource.transaction rolls back
    await commit();
    endTransaction(runner);
    const heard = [...outboxes];
    outboxes.clear();
    heard.forEach((o) => o.committed());
  };
  runner.rollbackTransaction = async () => {
    if (depth() > 1) return rollback();
    try {
      await rollback();
    } finally {
      endTransaction(runner);
      outboxes.clear(); // rolled back: nothing to announce
    }
  };
}
