import { AsyncLocalStorage } from 'node:async_hooks';
import { StoreError } from '../../core/errors.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { runScoped } from '../../core/scoped-work.js';
import { AsyncMutex } from '../sql/async-mutex.js';

/** The part of a better-sqlite3 `Statement` Surety needs (declared here, not imported from the driver). */
export interface SqliteStatementLike {
  /** True when the statement returns rows (SELECT, or any statement with RETURNING). */
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

/** The part of a better-sqlite3 `Database` Surety needs. */
export interface SqliteDatabaseLike {
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatementLike;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** Defines an SQL function on this connection. */
  function(
    name: string,
    options: { deterministic?: boolean; directOnly?: boolean },
    fn: (...args: never[]) => unknown,
  ): unknown;
  close(): unknown;
}

const MAX_CACHED_STATEMENTS = 200;
const statementCaches = new WeakMap<SqliteDatabaseLike, Map<string, SqliteStatementLike>>();
const locks = new WeakMap<SqliteDatabaseLike, AsyncMutex>();

/** Locks the current async context holds; `held` turns false on release, for callbacks that outlive it. */
interface Holding {
  readonly db: SqliteDatabaseLike;
  held: boolean;
}
const holdings = new AsyncLocalStorage<readonly Holding[]>();

/** Prepares once per database and SQL text; the oldest entry goes when the cache is full. */
function prepare(db: SqliteDatabaseLike, sql: string): SqliteStatementLike {
  let cache = statementCaches.get(db);
  if (!cache) statementCaches.set(db, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
    cache.set(sql, stmt);
  }
  return stmt;
}

/**
 * Runs `work` while holding the database's in-process lock, shared by {@link sqliteTransaction} and
 * every store operation. A better-sqlite3 `Database` is one connection: whatever runs on it while a
 * transaction is open becomes part of that transaction, so nothing else may run until it ends.
 */
export function withDatabaseLock<T>(db: SqliteDatabaseLike, work: () => Promise<T>): Promise<T> {
  const outer = holdings.getStore() ?? [];
  // Waiting for a lock this very context holds would never end: fail instead of hanging.
  if (outer.some((h) => h.db === db && h.held)) {
    return Promise.reject(
      new StoreError(
        'SQLite: called inside a transaction on the same Database; use its tx executor (waiting would deadlock)',
      ),
    );
  }
  let lock = locks.get(db);
  if (!lock) locks.set(db, (lock = new AsyncMutex()));
  return lock.run(async () => {
    const holding: Holding = { db, held: true };
    try {
      return await holdings.run([...outer, holding], work);
    } finally {
      holding.held = false;
    }
  });
}

/**
 * Wraps a better-sqlite3 `Database`. Statements run synchronously; the promise only fits the
 * {@link SqlExecutor} shape. Use it inside {@link sqliteTransaction}, which keeps the store's own
 * statements out of your transaction.
 * @example
 * await sqliteTransaction(db, async (tx) => {
 *   await tx.query('INSERT INTO orders (id) VALUES (?)', [order.id]);
 *   await outbox.add(tx, { type: 'order.created', key: order.id, payload: order });
 * });
 */
export function sqliteExecutor(db: SqliteDatabaseLike): SqlExecutor {
  return {
    async query<R>(sql: string, values: readonly unknown[] = []): Promise<SqlResult<R>> {
      const stmt = prepare(db, sql);
      if (stmt.reader) {
        const rows = stmt.all(...values) as R[];
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: stmt.run(...values).changes };
    },
  };
}

/**
 * Runs `work` in a `BEGIN IMMEDIATE` transaction on `db`; commits, or rolls back and rethrows.
 * IMMEDIATE takes the write lock up front (waiting up to busy_timeout for other processes), so the
 * commit never fails on a lock upgrade. Calls on the same `db` queue behind each other, and behind the
 * store's own operations; do not nest them (the inner call would wait for the outer forever).
 * @example
 * const db = new Database('app.sqlite');
 * const store = await createSqliteStore({ database: db });
 * await sqliteTransaction(db, (tx) => outbox.add(tx, { type: 'order.created', key: 'o-1', payload: {} }));
 */
export function sqliteTransaction<T>(db: SqliteDatabaseLike, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  return withDatabaseLock(db, async () => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = await runScoped(sqliteExecutor(db), work);
      db.exec('COMMIT');
      return result;
    } catch (err) {
      // SQLite may already have rolled back (some errors end the transaction themselves).
      if (db.inTransaction) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // The original error is the one worth reporting.
        }
      }
      throw err;
    }
  });
}
