import { TransactionAbortedError } from '../../core/errors.js';
import type { QueryHints, SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { isDeadlock } from '../../stores/mysql/errors.js';
import { abortedOr } from '../../stores/postgres/errors.js';
import { AsyncMutex } from '../../stores/sql/async-mutex.js';
import { bindTransaction } from './transaction-binding.js';

/** Runs one statement through the ORM, in its transaction. */
export type RunStatement = (sql: string, values: readonly unknown[], hints?: QueryHints) => Promise<SqlResult>;

/** An executor over an ORM transaction, and a way to wait until every statement issued on it has been answered. */
export interface OrmExecutor extends SqlExecutor {
  /** Resolves once the statements issued so far have settled. */
  drained(): Promise<void>;
  /** Throws TransactionAbortedError once MySQL rolled the transaction back after a deadlock (even one caught). */
  refuseAfterRollback(what: string): void;
}

/**
 * Statements go to the ORM one at a time, in the order issued: an executor's calls may overlap
 * (handlers running at once) and drivers deprecate or reorder overlapping queries on one connection.
 * A statement PostgreSQL refuses because the transaction is aborted (25P02) fails as
 * TransactionAbortedError, as the raw executors' do. After a MySQL deadlock, for which InnoDB rolls
 * the whole transaction back, no further statement is sent: it would run in autocommit, outside it.
 */
export function ormExecutor(run: RunStatement): OrmExecutor {
  const queue = new AsyncMutex();
  let rolledBack: unknown;
  const refuseAfterRollback = (what: string) => {
    if (rolledBack === undefined) return;
    throw new TransactionAbortedError(`MySQL rolled the transaction back after a deadlock: ${what}`, {
      cause: rolledBack,
    });
  };
  return {
    query<R = Record<string, unknown>>(
      sql: string,
      values: readonly unknown[] = [],
      hints?: QueryHints,
    ): Promise<SqlResult<R>> {
      return queue.run(async () => {
        refuseAfterRollback('this statement was not run');
        try {
          return (await run(sql, values, hints)) as SqlResult<R>;
        } catch (err) {
          if (isDeadlock(err)) rolledBack ??= err;
          throw abortedOr(err);
        }
      });
    },
    drained: () => queue.run(async () => undefined),
    refuseAfterRollback,
  };
}

/** A {@link SqlResult} of rows, and the count of rows changed where the driver reports one. */
export function sqlResult(
  rows: unknown[] | undefined,
  changed?: number | bigint | null,
  insertId?: unknown,
): SqlResult {
  const list = (rows ?? []) as Record<string, unknown>[];
  const rowCount = changed === undefined || changed === null ? list.length : Number(changed);
  const id = insertId === undefined || insertId === null ? 0 : Number(insertId);
  return id ? { rows: list, rowCount, insertId: id } : { rows: list, rowCount };
}

const executors = new WeakMap<object, OrmExecutor>();

/**
 * The one executor of the ORM transaction `trx`: every call for the same transaction gets the same
 * queue, and {@link transactionOf} finds `trx` from it.
 */
export function executorFor(trx: object, run: RunStatement): OrmExecutor {
  let tx = executors.get(trx);
  if (!tx) {
    tx = bindTransaction(ormExecutor(run), trx);
    executors.set(trx, tx);
  }
  return tx;
}
