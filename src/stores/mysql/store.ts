import { z } from 'zod';
import { InvalidOptionError, SuretyError } from '../../core/errors.js';
import { parseOptions } from '../../core/options.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';
import { applyMigrations } from '../sql/apply-migrations.js';
import { composeStore } from '../sql/compose-store.js';
import { checkIdentifier, tableNames, type TableNames } from '../sql/naming.js';
import { loadDriver } from '../sql/load-driver.js';
import * as adminSql from './admin-sql.js';
import { mysqlConnection } from './connection.js';
import { deadLetterStatements } from './dead-letter-sql.js';
import { mysqlExecutor, mysqlTransaction, type MysqlCallbackPoolLike, type MysqlPoolLike } from './executor.js';
import { inboxStatements } from './inbox-sql.js';
import { mysqlMigrations } from './migrations.js';
import { outboxStatements } from './outbox-sql.js';
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
    throw new InvalidOptionError('mysql', 'give exactly one of "pool" or "uri"');
  }
  checkIdentifier('mysql.tablePrefix', o.tablePrefix);
  // A callback-style pool also has getConnection (taking a callback); its promise() wrapper is what Surety needs.
  let pool =
    o.pool && 'promise' in o.pool && typeof o.pool.promise === 'function'
      ? o.pool.promise()
      : (o.pool as MysqlPoolLike | undefined);
  let ownsPool = false;
  if (!pool) {
    pool = loadDriver<typeof import('mysql2/promise')>('mysql2/promise', 'mysql2').createPool({
      uri: o.uri,
      connectionLimit: o.poolSize,
    }) as unknown as MysqlPoolLike;
    ownsPool = true;
  }
  return mysqlStore(pool, ownsPool, o.tablePrefix);
}

/** @deprecated Renamed {@link createMysqlStore}, since it returns the whole store; removed in the next minor version. */
export const createMysqlOutboxStore = createMysqlStore;

/** @deprecated Renamed {@link MysqlStore}; removed in the next minor version. */
export type MysqlOutboxStore = MysqlStore;

/** The store on a pool: the shared concerns over MySQL's statements and connection. `ownsPool`: end it with the store. */
function mysqlStore(pool: MysqlPoolLike, ownsPool: boolean, prefix: string): MysqlStore {
  const tables = tableNames(prefix, (n) => `\`${n}\``);
  const parts = {
    tables,
    connection: mysqlConnection(pool),
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => mysqlTransaction(pool, work),
    sql: {
      outbox: outboxStatements(tables, prefix),
      inbox: inboxStatements(tables),
      deadLetters: deadLetterStatements(tables, prefix),
      versionGuards: versionGuardStatements(tables),
      admin: adminSql,
    },
    migrate: () => migrate(pool, tables, prefix),
    close: async () => {
      if (ownsPool) await pool.end();
    },
  };
  return composeStore(parts, { dialect: 'mysql' as const, pool, tables });
}

/** Serialised by a named lock: MySQL DDL commits implicitly, so a transaction cannot do it. */
async function migrate(pool: MysqlPoolLike, tables: TableNames, prefix: string): Promise<void> {
  // GET_LOCK names are server-wide and at most 64 characters; a prefix shared by two databases only serialises them.
  const lockName = `surety_migrate:${prefix}`;
  try {
    const conn = await pool.getConnection();
    try {
      const [rows] = await conn.query('SELECT GET_LOCK(?, ?) AS got', [lockName, MIGRATION_LOCK_SECONDS]);
      if (Number((rows as { got: unknown }[])[0]?.got) !== 1) {
        throw new Error(`gave up waiting ${MIGRATION_LOCK_SECONDS} s for lock "${lockName}" held by another migrator`);
      }
      try {
        const steps = mysqlMigrations(tables, prefix);
        await applyMigrations(mysqlExecutor(conn), tables.migrations, steps, () => '?', Date.now());
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
