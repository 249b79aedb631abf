import { TransactionAbortedError } from '../../core/errors.js';
import { isDeadlock } from './errors.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { runScoped } from '../../core/scoped-work.js';
import { AsyncMutex } from '../sql/async-mutex.js';

/** The part of a mysql2/promise `Connection`, `PoolConnection` or `Pool` Surety needs (declared here, not imported). */
export interface MysqlQueryable {
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
}

export interface MysqlPoolConnectionLike extends MysqlQueryable {
  release(): void;
  /** Closes the connection instead of returning it to the pool (used when its state is unknown). */
  destroy(): void;
}

export interface MysqlPoolLike extends MysqlQueryable {
  getConnection(): Promise<MysqlPoolConnectionLike>;
  end(): Promise<void>;
}

/** A callback-style mysql2 pool (`mysql2.createPool`); Surety works through its promise wrapper. */
export interface MysqlCallbackPoolLike {
  promise(): MysqlPoolLike;
}

/**
 * Maps mysql2's `[rows, fields]` to a {@link SqlResult}: a SELECT gives an array of rows, a DML
 * statement a ResultSetHeader whose `affectedRows` becomes `rowCount`. mysql2 connects with the
 * FOUND_ROWS flag, so an UPDATE counts matched rows, not changed ones; Surety's updates always
 * change every row they match, so both readings agree.
 */
export function toSqlResult<R>(result: unknown): SqlResult<R> {
  if (Array.isArray(result)) return { rows: result as R[], rowCount: result.length };
  const header = result as { affectedRows?: number; insertId?: number } | undefined;
  const rowCount = header?.affectedRows ?? 0;
  return header?.insertId ? { rows: [], rowCount, insertId: Number(header.insertId) } : { rows: [], rowCount };
}

/**
 * Wraps a mysql2/promise connection that has an open transaction. Uses `query` (client-side
 * placeholders), which accepts every statement type and parameter `execute` does not.
 * @example
 * const conn = await pool.getConnection();
 * await conn.beginTransaction();
 * await outbox.add(mysqlExecutor(conn), { type: 'order.created', key: order.id, payload: order });
 * await conn.commit();
 * conn.release();
 */
export function mysqlExecutor(conn: MysqlQueryable): SqlExecutor {
  return {
    async query<R>(sql: string, values?: readonly unknown[]): Promise<SqlResult<R>> {
      const [result] = await conn.query(sql, values as unknown[] | undefined);
      return toSqlResult<R>(result);
    },
  };
}

export type MysqlIsolationLevel = 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/**
 * Runs `work` in a transaction on a connection from `pool`; commits, or rolls back and rethrows.
 * `isolation` applies to this transaction only; the session default (REPEATABLE READ) otherwise.
 * @example
 * await mysqlTransaction(pool, async (tx) => {
 *   await tx.query('UPDATE orders SET state = ? WHERE id = ?', ['paid', order.id]);
 *   await outbox.add(tx, { type: 'order.paid', key: order.id, payload: order });
 * });
 */
export async function mysqlTransaction<T>(
  pool: MysqlPoolLike,
  work: (tx: SqlExecutor) => Promise<T>,
  isolation?: MysqlIsolationLevel,
): Promise<T> {
  const conn = await pool.getConnection();
  const tx = new TransactionStatements(conn);
  let healthy = true;
  try {
    // Without SESSION, SET TRANSACTION affects only the next transaction, so the pooled connection stays clean.
    if (isolation) await conn.query(`SET TRANSACTION ISOLATION LEVEL ${isolation}`);
    await conn.query('START TRANSACTION');
    const result = await runScoped(tx, work);
    await tx.commit();
    return result;
  } catch (err) {
    // A connection whose rollback failed may still hold a transaction: never hand it back to the pool.
    await tx.rollback().catch(() => (healthy = false));
    throw err;
  } finally {
    if (healthy) conn.release();
    else conn.destroy();
  }
}

/**
 * The statements of one transaction, handed to mysql2 one at a time (it sends them one at a time
 * anyway) so that after a deadlock, for which InnoDB rolls the whole transaction back, none behind
 * it runs: sent, it would run in autocommit. COMMIT and ROLLBACK wait behind what was issued before.
 */
class TransactionStatements implements SqlExecutor {
  private readonly queue = new AsyncMutex();
  private readonly statements: SqlExecutor;
  private rolledBack: unknown;

  constructor(private readonly conn: MysqlQueryable) {
    this.statements = mysqlExecutor(conn);
  }

  query<R>(sql: string, values?: readonly unknown[]): Promise<SqlResult<R>> {
    return this.queue.run(async () => {
      this.refuseAfterRollback('this statement was not run');
      try {
        return await this.statements.query<R>(sql, values);
      } catch (err) {
        if (isDeadlock(err)) this.rolledBack = err;
        throw err;
      }
    });
  }

  /** Refuses when a deadlock rolled the transaction back, even if its error was caught: COMMIT would write nothing. */
  commit(): Promise<void> {
    return this.queue.run(async () => {
      this.refuseAfterRollback('nothing of it was written');
      await this.conn.query('COMMIT');
    });
  }

  rollback(): Promise<void> {
    return this.queue.run(async () => void (await this.conn.query('ROLLBACK')));
  }

  private refuseAfterRollback(what: string): void {
    if (this.rolledBack === undefined) return;
    throw new TransactionAbortedError(`MySQL rolled the transaction back after a deadlock: ${what}`, {
      cause: this.rolledBack,
    });
  }
}
