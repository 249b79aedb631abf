import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { DriverMissingError, NotMigratedError, StoreError, SuretyError } from '../../core/errors.js';
import { parseOptions } from '../../core/options.js';
import type { Store } from '../../ports/store.js';
import { composeStore } from '../sql/compose-store.js';
import type { OwnConnection } from '../sql/own-connection.js';
import type {
  ClaimRequest,
  FailureUpdate,
  InsertOptions,
  InsertResult,
  NewOutboxRow,
  LeasedRef,
  RowRef,
  OutboxRow,
  OutboxStats,
  OutboxStore,
} from '../../ports/outbox-store.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { storeError } from './errors.js';
import { applyMigrations } from '../sql/apply-migrations.js';
import type { AdminContext } from '../sql/admin-context.js';
import { checkIdentifier, tableNames, type TableNames } from '../sql/naming.js';
import { recordOutboxFailure } from '../sql/outbox-failure.js';
import { insertValues, leasedInsertValues, toOutboxRow } from '../sql/outbox-row.js';
import { purgeSentStepwise, type SentPurgeSql } from '../sql/sent-purge.js';
import { statsFromRows } from '../sql/stats.js';
import * as adminSql from './admin-sql.js';
import { sqliteExecutor, sqliteTransaction, withDatabaseLock, type SqliteDatabaseLike } from './executor.js';
import { sqliteMigrations } from './migrations.js';
import { registerUnicodeLower } from './unicode-lower.js';
import * as sql from './outbox-sql.js';
import { deadLetterStatements } from './dead-letter-sql.js';
import { inboxStatements } from './inbox-sql.js';
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
    throw new SuretyError('SURETY_INVALID_OPTION', 'invalid option "sqlite": give exactly one of "path" or "database"');
  }
  checkIdentifier('sqlite.tablePrefix', o.tablePrefix);
  if (o.database) return sqliteStore(new SqliteSqlStore(o.database, false, o.tablePrefix));
  const Database = loadBetterSqlite3();
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
  return sqliteStore(new SqliteSqlStore(db, true, o.tablePrefix));
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

function loadBetterSqlite3(): SqliteConstructor {
  try {
    const require = createRequire(import.meta.url);
    return require('better-sqlite3') as SqliteConstructor;
  } catch (err) {
    throw new DriverMissingError('better-sqlite3', { cause: err });
  }
}

function sqliteStore(core: SqliteSqlStore): SqliteStore {
  return composeStore(core, { dialect: core.dialect, db: core.db, tables: core.tables });
}

/** @deprecated Renamed {@link createSqliteStore}, since it returns the whole store; removed in the next minor version. */
export const createSqliteOutboxStore = createSqliteStore;

/** @deprecated Renamed {@link SqliteStore}; removed in the next minor version. */
export type SqliteOutboxStore = SqliteStore;

/** @internal The outbox concern on SQLite, with the store's connection (its migrations, transactions, close). */
export class SqliteSqlStore implements OutboxStore {
  readonly dialect = 'sqlite' as const;
  readonly tables;
  readonly outboxTable: string;
  readonly ownConnection: OwnConnection;
  /** The inbox, dead-letter and version-guard statements. */
  readonly consumerSql;
  readonly adminContext: AdminContext;

  constructor(
    readonly db: SqliteDatabaseLike,
    private readonly ownsDb: boolean,
    private readonly prefix: string,
  ) {
    registerUnicodeLower(db);
    this.tables = tableNames(prefix, (n) => `"${n}"`);
    this.outboxTable = this.tables.outbox;
    const own = { query: this.run.bind(this), transaction: this.ownTransaction.bind(this) };
    // In-process, there are no range statements to run differently: every one is one statement under the lock.
    this.ownConnection = { run: own.query, runRange: own.query, transaction: own.transaction };
    this.consumerSql = {
      inbox: inboxStatements(this.tables, prefix),
      deadLetters: deadLetterStatements(this.tables, prefix),
      versionGuards: versionGuardStatements(this.tables),
    };
    this.adminContext = { db: own, t: this.tables, sql: adminSql };
  }

  /** DDL is transactional in SQLite; BEGIN IMMEDIATE also serialises migrators in other processes. */
  async migrate(): Promise<void> {
    try {
      await sqliteTransaction(this.db, (tx) =>
        applyMigrations(tx, this.tables.migrations, sqliteMigrations(this.tables, this.prefix), () => '?', Date.now()),
      );
    } catch (err) {
      throw new SuretyError('SURETY_MIGRATION_FAILED', `SQLite migration failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return sqliteTransaction(this.db, work);
  }

  async insert(tx: SqlExecutor, row: NewOutboxRow, options: InsertOptions): Promise<InsertResult> {
    if (options.lease) {
      const { rows } = await tx.query<{ seq: number }>(
        sql.insertOutboxLeased(this.tables),
        leasedInsertValues(row, options.lease),
      );
      if (rows[0]) return { inserted: true, messageId: row.messageId, seq: Number(rows[0].seq) };
      return this.existing(tx, row);
    }
    let keySeq = 0;
    if (options.ordered) {
      const { rows } = await tx.query<{ last_seq: number }>(sql.nextKeySeq(this.tables), [row.orderingKey]);
      keySeq = Number(rows[0]!.last_seq);
    }
    const { rowCount } = await tx.query(sql.insertOutbox(this.tables), [...insertValues(row, keySeq), row.createdAt]);
    if (rowCount === 1) return { inserted: true, messageId: row.messageId };
    return this.existing(tx, row);
  }

  private async existing(tx: SqlExecutor, row: NewOutboxRow): Promise<InsertResult> {
    const existing = await tx.query<{ message_id: string }>(sql.selectMessageIdByTypeKey(this.tables), [
      row.type,
      row.key,
    ]);
    return { inserted: false, messageId: existing.rows[0]!.message_id };
  }

  /** Select, then take each row by its seq, in one transaction (see outbox-sql.ts on keys). */
  async claim(req: ClaimRequest): Promise<OutboxRow[]> {
    const rows = await this.ownTransaction(async (tx) => {
      const due = await tx.query<{ seq: number }>(sql.selectClaimable(this.tables, this.prefix, req.ordered), [
        req.now,
        req.limit,
      ]);
      const taken: Record<string, unknown>[] = [];
      for (const { seq } of due.rows) {
        const res = await tx.query(sql.claimRow(this.tables), [req.now + req.leaseMs, req.owner, seq]);
        taken.push(...res.rows);
      }
      return taken;
    });
    return rows.map(toOutboxRow).sort((a, b) => a.seq - b.seq);
  }

  markSent(seqs: readonly number[], now: number): Promise<number> {
    return this.eachRow(seqs, sql.markSentRow(this.tables), (seq) => [now, seq]);
  }

  /** The update and its history row in one transaction. */
  async recordFailure(u: FailureUpdate): Promise<boolean> {
    return this.ownTransaction((tx) => recordOutboxFailure(tx, sql, this.tables, u));
  }

  /** In the caller's transaction, one row at a time (see outbox-sql.ts on keys). */
  async countRows(tx: SqlExecutor, rows: readonly RowRef[]): Promise<number> {
    let n = 0;
    for (const r of rows) {
      const res = await tx.query<{ n: number }>(sql.countRow(this.tables), [r.seq, r.messageId]);
      n += Number(res.rows[0]!.n);
    }
    return n;
  }

  releaseLeased(owner: string, rows: readonly LeasedRef[], now: number): Promise<number> {
    return this.eachRow(rows, sql.releaseLeasedRow(this.tables), (r) => [
      now,
      r.seq,
      r.messageId,
      r.nextAttemptAt,
      owner,
    ]);
  }

  release(owner: string, seqs: readonly number[], now: number): Promise<number> {
    return this.eachRow(seqs, sql.releaseRow(this.tables), (seq) => [now, seq, owner]);
  }

  /** Rows and their attempt history in one transaction, one key per statement. */
  purgeSent(before: number, limit: number): Promise<number> {
    const purge: SentPurgeSql = {
      selectSent: sql.selectSent(this.tables, this.prefix),
      deleteRows: () => sql.deleteSent(this.tables),
      deleteAttempts: () => sql.deleteAttempts(this.tables, this.prefix),
      chunk: 1,
    };
    return this.ownTransaction((tx) => purgeSentStepwise(tx, purge, before, limit));
  }

  async stats(): Promise<OutboxStats> {
    return statsFromRows((await this.run(sql.stats(this.tables))).rows);
  }

  async acquireLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    return (await this.run(sql.acquireLease(this.tables), [name, owner, now + ttlMs, now])).rowCount === 1;
  }

  async get(messageId: string): Promise<OutboxRow | undefined> {
    const { rows } = await this.run(sql.selectByMessageId(this.tables), [messageId]);
    return rows[0] ? toOutboxRow(rows[0]) : undefined;
  }

  /** Waits for queued operations and open store transactions, then closes a database the store opened. */
  async close(): Promise<void> {
    await withDatabaseLock(this.db, async () => {
      if (this.ownsDb) this.db.close();
    });
  }

  /** A transaction of the store's own under the database lock; refuses to nest in a foreign one. */
  private async ownTransaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    try {
      return await sqliteTransaction(this.db, work);
    } catch (err) {
      throw storeError(err);
    }
  }

  /** `text` once per item, in one transaction of the store's own; returns the rows changed. */
  private async eachRow<I>(items: readonly I[], text: string, values: (item: I) => unknown[]): Promise<number> {
    if (items.length === 0) return 0;
    return this.ownTransaction(async (tx) => {
      let n = 0;
      for (const item of items) n += (await tx.query(text, values(item))).rowCount;
      return n;
    });
  }

  /** One statement under the database lock; autocommit, so it is its own transaction. */
  private async run(text: string, values?: readonly unknown[]): Promise<SqlResult> {
    try {
      return await withDatabaseLock(this.db, async () => {
        if (this.db.inTransaction) {
          throw new StoreError(
            'SQLite: a transaction is open on this Database outside sqliteTransaction(); the store will not run inside it',
          );
        }
        return sqliteExecutor(this.db).query(text, values);
      });
    } catch (err) {
      throw storeError(err);
    }
  }
}
