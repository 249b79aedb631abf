import { DrizzleQueryError, is, sql, type SQL } from 'drizzle-orm';
import { MySqlDatabase } from 'drizzle-orm/mysql-core';
import { PgDatabase } from 'drizzle-orm/pg-core';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { toSqlResult } from '../../stores/mysql/executor.js';
import { sqliteExecutor, type SqliteDatabaseLike } from '../../stores/sqlite/executor.js';
import { executorFor, sqlResult, type OrmExecutor } from '../shared/orm-executor.js';
import { splitPlaceholders } from '../shared/placeholders.js';
import { transactionOf } from '../shared/transaction-binding.js';

/** What the adapter runs statements with: `execute` (PostgreSQL, MySQL), or a better-sqlite3 database's `$client`. */
interface Executing {
  execute(query: SQL): PromiseLike<unknown>;
}

/** Surety's dialect name for a Drizzle database or transaction. */
export function drizzleDialect(db: object): 'postgres' | 'mysql' | 'sqlite' {
  if (is(db, PgDatabase)) return 'postgres';
  if (is(db, MySqlDatabase)) return 'mysql';
  return 'sqlite';
}

/** The better-sqlite3 connection under a Drizzle database (Drizzle runs its transactions synchronously). */
export function sqliteClient(db: object): SqliteDatabaseLike {
  const client = (db as { $client?: SqliteDatabaseLike }).$client;
  if (!client || typeof client.prepare !== 'function') {
    throw new TypeError('Drizzle on SQLite: give the database drizzle(new Database(...)) returned (better-sqlite3)');
  }
  return client;
}

/** Surety's statement as Drizzle SQL: its text around bound parameters, which Drizzle numbers itself. */
function drizzleSql(dialect: string, text: string, values: readonly unknown[]): SQL {
  const { parts, values: bound } = splitPlaceholders(dialect, text, values);
  return sql.join(
    parts.flatMap((part, i) => (i < bound.length ? [sql.raw(part), sql.param(bound[i])] : [sql.raw(part)])),
  );
}

/** What `execute` resolves with: node-postgres's result, postgres.js's row list (with `count`), mysql2's `[rows, fields]`. */
function drizzleResult(dialect: string, res: unknown): SqlResult {
  if (dialect === 'mysql') return toSqlResult((res as unknown[])[0]);
  if (Array.isArray(res)) return sqlResult(res, (res as { count?: number }).count);
  const { rows, rowCount } = res as { rows?: unknown[]; rowCount?: number | null };
  return sqlResult(rows, rowCount);
}

/** The one executor of a Drizzle transaction (on SQLite, of the database in the adapter's transaction). */
export function executorForDrizzle(trx: object): OrmExecutor {
  const dialect = drizzleDialect(trx);
  if (dialect === 'sqlite') {
    const statements = sqliteExecutor(sqliteClient(trx));
    return executorFor(trx, (text, values) => statements.query(text, values));
  }
  return executorFor(trx, async (text, values) => {
    try {
      return drizzleResult(dialect, await (trx as Executing).execute(drizzleSql(dialect, text, values)));
    } catch (err) {
      // The driver's error, as the raw executors give it: its SQLSTATE or errno is what Surety reads.
      throw err instanceof DrizzleQueryError && err.cause ? err.cause : err;
    }
  });
}

/**
 * The executor of a Drizzle transaction, for `outbox.add` and the store's statements inside it,
 * on node-postgres, postgres.js, mysql2 or better-sqlite3 (there: the database, inside
 * {@link drizzleTransaction}).
 * @example
 * await drizzleTransaction(db, outbox, async (trx) => {
 *   await trx.insert(orders).values(order);
 *   await outbox.add(drizzleExecutor(trx), { type: 'order.created', key: order.id, payload: order });
 * });
 */
export function drizzleExecutor(trx: object): SqlExecutor {
  return executorForDrizzle(trx);
}

/**
 * The Drizzle transaction a consumer's handler runs in, from its context's `tx` (on SQLite, the
 * database, inside the store's transaction): its writes commit together with the inbox record.
 * @example
 * consumer.on('order.created', async (order: Order, ctx) => {
 *   await drizzleTransactionOf<typeof db>(ctx.tx).insert(invoices).values({ orderId: order.id });
 * });
 */
export function drizzleTransactionOf<T = unknown>(tx: SqlExecutor): T {
  return transactionOf<T>('Drizzle', tx);
}
