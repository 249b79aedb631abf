import { runScoped } from '../../core/scoped-work.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { refuseAbortedCommit } from './commit-check.js';
import type { OrmExecutor } from './orm-executor.js';
import { bindTransaction, withTransaction } from './transaction-binding.js';

/** What an adapter needs of an outbox: the announcement that a transaction holding its rows committed. */
export interface CommitAnnouncer {
  committed(): void;
}

/** What an ORM adapter gives: how to run the ORM's own transaction, and an executor over one. */
export interface OrmTransactions<Trx extends object> {
  /** `postgres` enables the check against committing an aborted transaction. */
  readonly dialect: string;
  /** Runs `work` in the ORM's own transaction: commits when it resolves, rolls back when it rejects. */
  run<T>(work: (trx: Trx) => Promise<T>): Promise<T>;
  executor(trx: Trx): OrmExecutor;
}

/**
 * Runs `work` in the ORM's transaction with an executor over it. Statements issued after `work`
 * settled are refused, and those issued before are answered before the ORM commits or rolls back:
 * left queued, they would run after it, outside the transaction. On PostgreSQL a transaction that a
 * caught failed statement aborted is rolled back with TransactionAbortedError instead of "committed".
 */
export function runOrmTransaction<Trx extends object, T>(
  orm: OrmTransactions<Trx>,
  work: (trx: Trx, tx: SqlExecutor) => Promise<T>,
): Promise<T> {
  return orm.run(async (trx) => {
    const tx = orm.executor(trx);
    try {
      const result = await withTransaction(trx, () =>
        runScoped(tx as SqlExecutor, (scoped) => work(trx, bindTransaction(scoped, trx))),
      );
      await refuseAbortedCommit(orm.dialect, tx);
      return result;
    } finally {
      await tx.drained();
    }
  });
}
