import { existsSync } from 'node:fs';
import { z } from 'zod';
import { InvalidOptionError, NotMigratedError, StoreError, SuretyError } from '../../core/errors.js';
import { parseOptions } from '../../core/options.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';
import { applyMigrations } from '../sql/apply-migrations.js';
import { composeStore } from '../sql/compose-store.js';
import { checkIdentifier, tableNames, type TableNames } from '../sql/naming.js';
import { loadDriver } from '../sql/load-driver.js';
import * as adminSql from './admin-sql.js';
import { sqliteConnection } from './connection.js';
import { deadLetterStatements } from './dead-letter-sql.js';
import { sqliteTransaction, withDatabaseLock, type SqliteDatabaseLike } from './executor.js';
import { inboxStatements } from './inbox-sql.js';
import { sqliteMigrations } from './migrations.js';
import { outboxStatements } from './outbox-sql.js';
import { registerUnicodeLower } from './unicode-lower.js';
import { versionGuardStatements } from './version-guard-sql.js';

const optionsSchema = z.object({
  /** Database file the store opens (and closes), `:memory:` for a private in-memory one. Either this or `database`. */
  path: z.string().min(1).optional(),
  /** An open better-sqlite3 Database, shared with the application. Its settings are left as they are. */
  database: z
    .custom<SqliteDatabaseLike>(
      (v) => typeof (v as { prepare?: unknown } | null)?.prepare === 'function',
      'must be a better-sqlite3 Database',
    )
    .optional(),
  tablePrefix: z.string().default('surety_'),
  /** How long a statement waits for another process's write lock (databases opened from `path`). */
  busyTimeoutMs: z.number().int().min(0).max(600_000).default(5_000),
  /**
   * Open `path` only if the file is there and holds Surety's tables; never create it. For readers
   * (an operator's CLI) that must not leave an empty database behind a mistyped path.
   */
  fileMustExist: z.boolean().default(false),
});

export type SqliteStoreOptions = z.input<typeof optionsSchema>;

/** A store on SQLite: {@link Store} with its database and table names. */
export interface SqliteStore extends Store {
  readonly dialect: 'sqlite';
  readonly db: SqliteDatabaseLike;
  readonly tables: TableNames;
}

/**
 * Outbox, inbox, dead-letter and admin store on SQLite (better-sqlite3). A database opened from `path` gets
 * WAL mode, synchronous=NORMAL and a busy timeout.
 *
 * Within a process, every store operation and every {@link sqliteTransaction} on the same `Database`
 * queue on one lock, so the relay's statements never slip into an application transaction that is
 * open across awaits. Open transactions on a shared `Database` only through `sqliteTransaction` (or
 * `store.transaction`); inside one, use its `tx` (store methods called there reject rather than
 * wait for the transaction they are part of). Another process (a relay elsewhere) may open the same file: SQLite's file
 * locks and the busy timeout serialise writers across processes.
 * @example
 * const store = await createSqliteStore({ path: 'app.sqlite' });
 * await store.migrate();
 * await store.transaction((tx) => outbox.add(tx, { type: 'order.created', key: 'o-1', payload: {} }));
 */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const o = parseOptions(optionsSchema, options, 'sqlite');
  if (!o.path === !o.database) {
    throw new InvalidOptionError('sqlite', 'give exactly one of "path" or "database"');
  }
  checkIdentifier('sqlite.tablePrefix', o.tablePrefix);
  if (o.database) return sqliteStore(o.database, false, o.tablePrefix);
  const Database = loadDriver<SqliteConstructor>('better-sqlite3');
  const path = o.path!;
  if (o.fileMustExist && path !== ':memory:' && !existsSync(path)) {
    throw new NotMigratedError(`SQLite: no database file at "${path}" (none was created)`);
  }
  let db: SqliteDatabaseLike;
  try {
    db = new Database(path, { fileMustExist: o.fileMustExist });
  } catch (err) {
    throw new StoreError(`SQLite: cannot open "${path}": ${(err as Error).message}`, { cause: err });
  }
  // Checked before any pragma: a file that is not Surety's is left exactly as it was.
  if (o.fileMustExist && !hasTable(db, path, `${o.tablePrefix}migrations`)) {
    db.close();
    throw new NotMigratedError(`SQLite: "${path}" holds no Surety tables (prefix ${o.tablePrefix})`);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`busy_timeout = ${o.busyTimeoutMs}`);
  } catch (err) {
    db.close();
    throw new StoreError(`SQLite: cannot open "${path}": ${(err as Error).message}`, { cause: err });
  }
  return sqliteStore(db, true, o.tablePrefix);
}

function hasTable(db: SqliteDatabaseLike, path: string, name: string): boolean {
  try {
    return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).all(name).length > 0;
  } catch (err) {
    db.close();
    throw new StoreError(`SQLite: cannot read "${path}": ${(err as Error).message}`, { cause: err });
  }
}

type SqliteConstructor = new (path: string, options?: { fileMustExist?: boolean }) => SqliteDatabaseLike;

/** @deprecated Renamed {@link createSqliteStore}, since it returns the whole store; removed in the next minor version. */
export const createSqliteOutboxStore = createSqliteStore;

/** @deprecated Renamed {@link SqliteStore}; removed in the next minor version. */
export type SqliteOutboxStore = SqliteStore;

/**
 * The store on an open Database: the shared concerns over SQLite's statements and connection.
 * `ownsDb`: close it with the store.
 */
function sqliteStore(db: SqliteDatabaseLike, ownsDb: boolean, prefix: string): SqliteStore {
  registerUnicodeLower(db);
  const tables = tableNames(prefix, (n) => `"${n}"`);
  const parts = {
    tables,
    connection: sqliteConnection(db),
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => sqliteTransaction(db, work),
    sql: {
      outbox: outboxStatements(tables, prefix),
      inbox: inboxStatements(tables, prefix),
      deadLetters: deadLetterStatements(tables, prefix),
      versionGuards: versionGuardStatements(tables),
      admin: adminSql,
    },
    // DDL is transactional in SQLite; BEGIN IMMEDIATE also serialises migrators in other processes.
    async migrate() {
      try {
        await sqliteTransaction(db, (tx) =>
          applyMigrations(tx, tables.migrations, sqliteMigrations(tables, prefix), () => '?', Date.now()),
        );
      } catch (err) {
        throw new SuretyError('SURETY_MIGRATION_FAILED', `SQLite migration failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
    },
    // Waits for queued operations and open store transactions, then closes a database the store opened.
    close: () =>
      withDatabaseLock(db, async () => {
        if (ownsDb) db.close();
      }),
  };
  return composeStore(parts, { dialect: 'sqlite' as const, db, tables });
}
