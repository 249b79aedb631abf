import { createRequire } from 'node:module';
import { z } from 'zod';
import { DriverMissingError, SuretyError } from '../../core/errors.js';
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
import { AsyncMutex } from '../sql/async-mutex.js';
import type { AdminContext } from '../sql/admin-context.js';
import { checkIdentifier, tableNames, type TableNames } from '../sql/naming.js';
import { recordOutboxFailure } from '../sql/outbox-failure.js';
import { insertValues, leasedInsertValues, toOutboxRow } from '../sql/outbox-row.js';
import { purgeSentStepwise, type SentPurgeSql } from '../sql/sent-purge.js';
import { statsFromRows } from '../sql/stats.js';
import * as adminSql from './admin-sql.js';
import { isDeadlock, isDuplicateKey, isLockWaitTimeout } from './errors.js';
import { mysqlExecutor, mysqlTransaction, type MysqlCallbackPoolLike, type MysqlPoolLike } from './executor.js';
import { mysqlMigrations } from './migrations.js';
import * as sql from './outbox-sql.js';
import { deadLetterStatements } from './dead-letter-sql.js';
import { inboxStatements } from './inbox-sql.js';
import { versionGuardStatements } from './version-guard-sql.js';

const optionsSchema = z.object({
  /** An existing mysql2 pool (promise or callback flavour). Either this or `uri`. */
  pool: z
    .custom<MysqlPoolLike | MysqlCallbackPoolLike>(
      (v) => typeof (v as { getConnection?: unknown } | null)?.getConnection === 'function',
      'must be a mysql2 Pool',
    )
    .optional(),
  uri: z.string().min(1).optional(),
  /** Maximum connections of the pool Surety creates from `uri`. */
  poolSize: z.number().int().min(2).max(100).default(4),
  tablePrefix: z.string().default('surety_'),
});

export type MysqlStoreOptions = z.input<typeof optionsSchema>;

/** How long a migrator waits for another one to finish. */
const MIGRATION_LOCK_SECONDS = 60;

/** A store on MySQL or MariaDB: {@link Store} with its pool and table names. */
export interface MysqlStore extends Store {
  readonly dialect: 'mysql';
  readonly pool: MysqlPoolLike;
  readonly tables: TableNames;
}

/**
 * Outbox, inbox, dead-letter and admin store on MySQL 8 or MariaDB 10.6+ (mysql2). Claims use FOR UPDATE
 * SKIP LOCKED on a forced index. MySQL has no commit notifications: relays find new rows by polling
 * (and in-process wake-ups).
 * @example
 * const store = await createMysqlStore({ uri: 'mysql://app@localhost/app' });
 * await store.migrate();
 */
export async function createMysqlStore(options: MysqlStoreOptions): Promise<MysqlStore> {
  const o = parseOptions(optionsSchema, options, 'mysql');
  if (!o.pool === !o.uri) {
    throw new SuretyError('SURETY_INVALID_OPTION', 'invalid option "mysql": give exactly one of "pool" or "uri"');
  }
  checkIdentifier('mysql.tablePrefix', o.tablePrefix);
  // A callback-style pool also has getConnection (taking a callback); its promise() wrapper is what Surety needs.
  let pool =
    o.pool && 'promise' in o.pool && typeof o.pool.promise === 'function'
      ? o.pool.promise()
      : (o.pool as MysqlPoolLike | undefined);
  let ownsPool = false;
  if (!pool) {
    pool = loadMysql2().createPool({ uri: o.uri, connectionLimit: o.poolSize }) as unknown as MysqlPoolLike;
    ownsPool = true;
  }
  return mysqlStore(new MysqlSqlStore(pool, ownsPool, o.tablePrefix));
}

function loadMysql2(): typeof import('mysql2/promise') {
  try {
    const require = createRequire(import.meta.url);
    return require('mysql2/promise') as typeof import('mysql2/promise');
  } catch (err) {
    throw new DriverMissingError('mysql2', { cause: err });
  }
}

/**
 * InnoDB picks a deadlock victim among concurrent claimers and settlers and rolls its statement or
 * transaction back whole; running it again is the documented remedy. Only Surety's own statements
 * and transactions are retried, never a caller's.
 */
async function retryDeadlocks<T>(work: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (err) {
      // A lock wait timeout rolls back only the statement.
      if (i >= attempts || !(isDeadlock(err) || isLockWaitTimeout(err))) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 10));
    }
  }
}

/** Per transaction: its key_seq bump and read-back must not interleave with another add's (handlers at once). */
const keySeqLocks = new WeakMap<SqlExecutor, AsyncMutex>();

function mysqlStore(core: MysqlSqlStore): MysqlStore {
  return composeStore(core, { dialect: core.dialect, pool: core.pool, tables: core.tables });
}

/** @deprecated Renamed {@link createMysqlStore}, since it returns the whole store; removed in the next minor version. */
export const createMysqlOutboxStore = createMysqlStore;

/** @deprecated Renamed {@link MysqlStore}; removed in the next minor version. */
export type MysqlOutboxStore = MysqlStore;

/** @internal The outbox concern on MySQL, with the store's connection (its migrations, transactions, close). */
export class MysqlSqlStore implements OutboxStore {
  readonly dialect = 'mysql' as const;
  readonly tables;
  readonly outboxTable: string;
  readonly ownConnection: OwnConnection;
  /** The inbox, dead-letter and version-guard statements. */
  readonly consumerSql;
  readonly adminContext: AdminContext;

  constructor(
    readonly pool: MysqlPoolLike,
    private readonly ownsPool: boolean,
    private readonly prefix: string,
  ) {
    this.tables = tableNames(prefix, (n) => `\`${n}\``);
    this.outboxTable = this.tables.outbox;
    this.ownConnection = {
      run: (text, values) => this.run(text, values),
      // In READ COMMITTED: the range takes no gap locks that would stall consumers' writes.
      runRange: (text, values) => this.ownTransaction((tx) => tx.query(text, values)),
      transaction: (work) => this.ownTransaction(work),
    };
    this.consumerSql = {
      inbox: inboxStatements(this.tables),
      deadLetters: deadLetterStatements(this.tables, prefix),
      versionGuards: versionGuardStatements(this.tables),
    };
    this.adminContext = {
      db: { query: (text, values) => this.run(text, values), transaction: (work) => this.ownTransaction(work) },
      t: this.tables,
      sql: adminSql,
    };
  }

  /** Serialised by a named lock: MySQL DDL commits implicitly, so a transaction cannot do it. */
  async migrate(): Promise<void> {
    // GET_LOCK names are server-wide and at most 64 characters; a prefix shared by two databases only serialises them.
    const lockName = `surety_migrate:${this.prefix}`;
    try {
      const conn = await this.pool.getConnection();
      try {
        const [rows] = await conn.query('SELECT GET_LOCK(?, ?) AS got', [lockName, MIGRATION_LOCK_SECONDS]);
        if (Number((rows as { got: unknown }[])[0]?.got) !== 1) {
          throw new Error(
            `gave up waiting ${MIGRATION_LOCK_SECONDS} s for lock "${lockName}" held by another migrator`,
          );
        }
        try {
          await applyMigrations(
            mysqlExecutor(conn),
            this.tables.migrations,
            mysqlMigrations(this.tables, this.prefix),
            () => '?',
            Date.now(),
          );
        } finally {
          await conn.query('SELECT RELEASE_LOCK(?)', [lockName]);
        }
      } finally {
        conn.release();
      }
    } catch (err) {
      throw new SuretyError('SURETY_MIGRATION_FAILED', `MySQL migration failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return mysqlTransaction(this.pool, work);
  }

  async insert(tx: SqlExecutor, row: NewOutboxRow, options: InsertOptions): Promise<InsertResult> {
    let keySeq = 0;
    if (options.ordered) {
      let lock = keySeqLocks.get(tx);
      if (!lock) keySeqLocks.set(tx, (lock = new AsyncMutex()));
      keySeq = await lock.run(async () => {
        await tx.query(sql.bumpKeySeq(this.tables), [row.orderingKey]);
        const { rows } = await tx.query<{ last_seq: number | string }>(sql.selectKeySeq(this.tables), [
          row.orderingKey,
        ]);
        return Number(rows[0]!.last_seq);
      });
    }
    try {
      if (!options.lease) {
        await tx.query(sql.insertOutbox(this.tables), [...insertValues(row, keySeq), row.createdAt]);
        return { inserted: true, messageId: row.messageId };
      }
      // One statement: an add still running when the transaction's callback settles is either wholly
      // in it or refused, never an insert whose seq could not be read back.
      const res = await tx.query(sql.insertOutboxLeased(this.tables), leasedInsertValues(row, options.lease));
      if (res.insertId === undefined) throw new TypeError('the MySQL executor reported no insert id');
      return { inserted: true, messageId: row.messageId, seq: res.insertId };
    } catch (err) {
      // InnoDB rolls back just the failed statement: the caller's transaction goes on.
      if (!isDuplicateKey(err)) throw err;
      const existing = await tx.query<{ message_id: string }>(sql.selectMessageIdByTypeKey(this.tables), [
        row.type,
        row.key,
      ]);
      // No row with this (type, key): the duplicate was the message id itself, a caller bug worth surfacing.
      if (!existing.rows[0]) throw err;
      return { inserted: false, messageId: existing.rows[0].message_id };
    }
  }

  async claim(req: ClaimRequest): Promise<OutboxRow[]> {
    const leaseUntil = req.now + req.leaseMs;
    const rows = await this.ownTransaction(async (tx) => {
      let { rows } = await tx.query(sql.selectClaimable(this.tables, this.prefix, req.ordered), [req.now, req.limit]);
      if (req.ordered && rows.length > 0) {
        const held = await tx.query(
          sql.heldBack(this.tables, this.prefix, rows.length),
          rows.map((r) => r.seq),
        );
        const skip = new Set(held.rows.map((r) => Number(r.seq)));
        if (skip.size > 0) rows = rows.filter((r) => !skip.has(Number(r.seq)));
      }
      if (rows.length > 0) {
        await tx.query(sql.claimRows(this.tables, rows.length), [leaseUntil, req.owner, ...rows.map((r) => r.seq)]);
      }
      return rows;
    });
    return rows
      .map((r) => toOutboxRow({ ...r, next_attempt_at: leaseUntil, claimed_by: req.owner }))
      .sort((a, b) => a.seq - b.seq);
  }

  async markSent(seqs: readonly number[], now: number): Promise<number> {
    if (seqs.length === 0) return 0;
    return (await this.run(sql.markSent(this.tables, seqs.length), [now, ...seqs])).rowCount;
  }

  /** The update and its history row commit together (MySQL has no data-modifying CTE). */
  async recordFailure(u: FailureUpdate): Promise<boolean> {
    return this.ownTransaction((tx) => recordOutboxFailure(tx, sql, this.tables, u));
  }

  async countRows(tx: SqlExecutor, rows: readonly RowRef[]): Promise<number> {
    let n = 0;
    for (const part of chunks(rows)) {
      const values = part.flatMap((r) => [r.seq, r.messageId]);
      const res = await tx.query<{ n: number | string }>(sql.countRows(this.tables, part.length), values);
      n += Number(res.rows[0]!.n);
    }
    return n;
  }

  async releaseLeased(owner: string, rows: readonly LeasedRef[], now: number): Promise<number> {
    let n = 0;
    for (const part of chunks(rows)) {
      const values = [now, owner, ...part.flatMap((r) => [r.seq, r.messageId, r.nextAttemptAt])];
      n += (await this.run(sql.releaseLeased(this.tables, part.length), values)).rowCount;
    }
    return n;
  }

  async release(owner: string, seqs: readonly number[], now: number): Promise<number> {
    if (seqs.length === 0) return 0;
    return (await this.run(sql.releaseClaims(this.tables, seqs.length), [now, owner, ...seqs])).rowCount;
  }

  /** Rows and their attempt history in one READ COMMITTED transaction (no gap locks to stall the relay). */
  purgeSent(before: number, limit: number): Promise<number> {
    const purge: SentPurgeSql = {
      selectSent: sql.selectSent(this.tables, this.prefix),
      deleteRows: (n) => sql.deleteSent(this.tables, n),
      deleteAttempts: (n) => sql.deleteAttempts(this.tables, n),
      chunk: 500,
    };
    return this.ownTransaction((tx) => purgeSentStepwise(tx, purge, before, limit));
  }

  async stats(): Promise<OutboxStats> {
    return statsFromRows((await this.run(sql.stats(this.tables))).rows);
  }

  async acquireLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    const expiresAt = now + ttlMs;
    return this.ownTransaction(async (tx) => {
      await tx.query(sql.upsertLease(this.tables), [name, owner, expiresAt, owner, now, owner, owner, now, expiresAt]);
      const { rows } = await tx.query<{ owner: string }>(sql.selectLeaseOwner(this.tables), [name]);
      return rows[0]?.owner === owner;
    });
  }

  async get(messageId: string): Promise<OutboxRow | undefined> {
    const { rows } = await this.run(sql.selectByMessageId(this.tables), [messageId]);
    return rows[0] ? toOutboxRow(rows[0]) : undefined;
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  private async run(text: string, values?: readonly unknown[]): Promise<SqlResult> {
    try {
      return await retryDeadlocks(() => mysqlExecutor(this.pool).query(text, values));
    } catch (err) {
      throw storeError(err);
    }
  }

  /** READ COMMITTED: locking reads take no gap locks, so a claim never blocks the application's inserts. */
  private async ownTransaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    try {
      return await retryDeadlocks(() => mysqlTransaction(this.pool, work, 'READ COMMITTED'));
    } catch (err) {
      throw storeError(err);
    }
  }
}

/** Lists of rows in statements of at most 500 terms: a long OR list outgrows the range optimizer's memory. */
function chunks<R>(rows: readonly R[]): R[][] {
  const out: R[][] = [];
  for (let i = 0; i < rows.length; i += 500) out.push(rows.slice(i, i + 500));
  return out;
}
