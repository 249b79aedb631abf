import { z } from 'zod';
import { InvalidOptionError, SuretyError } from '../../core/errors.js';
import { parseOptions } from '../../core/options.js';
import type { ClaimRequest, OutboxStore } from '../../ports/outbox-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';
import { applyMigrations } from '../sql/apply-migrations.js';
import { composeStore } from '../sql/compose-store.js';
import { checkIdentifier, tableNames, type TableNames } from '../sql/naming.js';
import { loadDriver } from '../sql/load-driver.js';
import * as adminSql from './admin-sql.js';
import { listenForCommits } from './commit-listener.js';
import { CommitNotifier } from './commit-notifier.js';
import { postgresConnection } from './connection.js';
import { deadLetterStatements } from './dead-letter-sql.js';
import { storeError } from './errors.js';
import { pgTransaction, type PgPoolLike } from './executor.js';
import { inboxStatements } from './inbox-sql.js';
import { claimLocked } from './locked-batch.js';
import { postgresMigrations } from './migrations.js';
import { outboxStatements } from './outbox-sql.js';
import { versionGuardStatements } from './version-guard-sql.js';

const optionsSchema = z.object({
  /** An existing pg Pool. Either this or `connectionString`. */
  pool: z
    .custom<PgPoolLike>((v) => typeof v === 'object' && v !== null && 'connect' in v, 'must be a pg Pool')
    .optional(),
  connectionString: z.string().min(1).optional(),
  /**
   * Maximum connections of the pool Surety creates from `connectionString`. A relay with locked
   * claims holds up to `maxLockedBatches` (4) + 1 while it publishes; LISTEN holds one more.
   */
  poolSize: z.number().int().min(2).max(100).default(10),
  /**
   * Pipeline mode for the pool Surety creates: statements issued at once on one connection (consumer
   * handlers with `handlerConcurrency` > 1) go out without waiting for each other's answers. Surety's
   * own statements are sequential and behave the same either way. Give your own pool
   * `pipeline: true` for the same effect. pg refuses cursors and the `rows` option in this mode.
   */
  pipeline: z.boolean().default(true),
  schema: z.string().default(''),
  tablePrefix: z.string().default('surety_'),
  /** LISTEN/NOTIFY channel; defaults to one derived from schema and prefix. */
  notifyChannel: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/i, 'must be a plain identifier of at most 63 characters')
    .optional(),
});

export type PostgresStoreOptions = z.input<typeof optionsSchema>;

/** The outbox concern on PostgreSQL: locked claims, LISTEN and NOTIFY besides the common operations. */
export type PostgresOutbox = OutboxStore &
  Required<Pick<OutboxStore, 'claimLocked' | 'listenForCommits' | 'notifyCommitted'>> & {
    readonly notifyChannel: string;
    /** Resolves once the after-commit NOTIFYs asked for so far have been sent. */
    notificationsSent(): Promise<void>;
  };

/** A store on PostgreSQL: {@link Store} with its pool, table names and NOTIFY channel. */
export interface PostgresStore extends Store {
  readonly dialect: 'postgres';
  readonly outbox: PostgresOutbox;
  readonly pool: PgPoolLike;
  readonly tables: TableNames;
  readonly notifyChannel: string;
}

/**
 * Outbox, inbox, dead-letter and admin store on PostgreSQL (pg). Claims use FOR UPDATE SKIP LOCKED under a
 * forced index plan; commits are announced with NOTIFY so relays in other processes wake within milliseconds.
 * @example
 * const store = await createPostgresStore({ connectionString: 'postgres://localhost/app' });
 * await store.migrate();
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const o = parseOptions(optionsSchema, options, 'postgres');
  if (!o.pool && !o.connectionString) {
    throw new InvalidOptionError('postgres', 'give either "pool" or "connectionString"');
  }
  checkIdentifier('postgres.schema', o.schema, true);
  checkIdentifier('postgres.tablePrefix', o.tablePrefix);
  let pool = o.pool;
  let ownsPool = false;
  if (!pool) {
    const pg = loadDriver<typeof import('pg')>('pg');
    pool = new pg.Pool({
      connectionString: o.connectionString,
      max: o.poolSize,
      keepAlive: true,
      pipeline: o.pipeline,
    } as import('pg').PoolConfig) as unknown as PgPoolLike;
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    (pool as unknown as { on(ev: string, fn: (e: Error) => void): void }).on('error', () => undefined);
    ownsPool = true;
  }
  const channel =
    o.notifyChannel ?? `${o.schema ? `${o.schema}_` : ''}${o.tablePrefix}outbox`.slice(0, 63).toLowerCase();
  return postgresStore(pool, ownsPool, o.schema, o.tablePrefix, channel);
}

/** @deprecated Renamed {@link createPostgresStore}, since it returns the whole store; removed in the next minor version. */
export const createPostgresOutboxStore = createPostgresStore;

/** @deprecated Renamed {@link PostgresStore}; removed in the next minor version. */
export type PostgresOutboxStore = PostgresStore;

/**
 * The store on a pool: the shared concerns over PostgreSQL's statements and connection, its outbox
 * with locked claims, LISTEN and NOTIFY besides. `ownsPool`: end it with the store.
 */
function postgresStore(
  pool: PgPoolLike,
  ownsPool: boolean,
  schema: string,
  prefix: string,
  channel: string,
): PostgresStore {
  const tables = tableNames(prefix, (n) => (schema ? `"${schema}"."${n}"` : `"${n}"`));
  const connection = postgresConnection(pool);
  const notifier = new CommitNotifier(pool, channel);
  const parts = {
    tables,
    connection,
    adminQuery: connection.query,
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => pgTransaction(pool, work),
    sql: {
      outbox: outboxStatements(tables, channel),
      inbox: inboxStatements(tables),
      deadLetters: deadLetterStatements(tables),
      versionGuards: versionGuardStatements(tables),
      admin: adminSql,
    },
    outboxExtras: {
      notifyChannel: channel,
      claimLocked: (req: Omit<ClaimRequest, 'owner'>) => claimLocked(pool, tables, req, storeError),
      listenForCommits: (onCommit: () => void, onError: (err: unknown) => void) =>
        listenForCommits(pool, channel, onCommit, onError),
      notifyCommitted: () => notifier.signal(),
      notificationsSent: () => notifier.idle(),
    },
    migrate: () => migrate(pool, tables, schema, prefix),
    async close() {
      await notifier.idle();
      if (ownsPool) await pool.end();
    },
  };
  return composeStore(parts, { dialect: 'postgres' as const, pool, tables, notifyChannel: channel });
}

async function migrate(pool: PgPoolLike, tables: TableNames, schema: string, prefix: string): Promise<void> {
  try {
    await pgTransaction(pool, async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [tables.migrations], { countOnly: true });
      if (schema) await tx.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await applyMigrations(tx, tables.migrations, postgresMigrations(tables, prefix), (n) => `$${n}`, Date.now());
    });
  } catch (err) {
    throw new SuretyError('SURETY_MIGRATION_FAILED', `PostgreSQL migration failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
