import { createRequire } from 'node:module';
import { DriverMissingError } from '../../core/errors.js';

/** The few members of a better-sqlite3 statement the transport uses (declared, not imported, to keep the driver optional). */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** The few members of a better-sqlite3 `Database` the transport uses. */
export interface SqliteDatabase {
  readonly name: string;
  readonly memory: boolean;
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
}

/** better-sqlite3 open options the package uses. */
export interface SqliteOpenOptions {
  readonly readonly?: boolean;
  readonly fileMustExist?: boolean;
}

type SqliteDatabaseConstructor = new (path: string, options?: SqliteOpenOptions) => SqliteDatabase;

const requireFromHere = createRequire(import.meta.url);

/** Loads better-sqlite3 on first use, so that it stays an optional peer dependency. */
export function loadSqliteDriver(): SqliteDatabaseConstructor {
  try {
    return requireFromHere('better-sqlite3') as SqliteDatabaseConstructor;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'MODULE_NOT_FOUND')
      throw new DriverMissingError('better-sqlite3', { cause: err });
    throw err;
  }
}

/**
 * Runs `work` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front (waiting up to
 * busy_timeout) so a commit never fails on a lock upgrade. Synchronous by design: no write
 * transaction is ever held across an await.
 */
export function inWriteTransaction<T>(db: SqliteDatabase, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.inTransaction) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // The original error is the one worth reporting; SQLite may already have rolled back.
      }
    }
    throw err;
  }
}

/** SQLite result code of a driver error (`SQLITE_BUSY`, `SQLITE_FULL`...), if it has one. */
export function sqliteErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}
