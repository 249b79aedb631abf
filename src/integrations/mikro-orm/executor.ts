import type { EntityManager } from '@mikro-orm/core';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { toSqlResult } from '../../stores/mysql/executor.js';
import { ormExecutor, sqlResult, type OrmExecutor } from '../shared/orm-executor.js';
import { splitPlaceholders } from '../shared/placeholders.js';
import { bindTransaction, transactionOf } from '../shared/transaction-binding.js';

/** What the adapter uses of the Knex transaction a MikroORM 6 SQL driver holds as its transaction context. */
export interface KnexTransactionLike {
  raw(sql: string, bindings: readonly unknown[]): PromiseLike<unknown>;
  readonly client: { readonly dialect?: string };
  /** Set on a nested transaction (a savepoint): Knex's own link to the transaction it runs in. */
  readonly parentTransaction?: KnexTransactionLike;
}

/** Surety's dialect name for a MikroORM SQL driver's Knex client. */
export function mikroOrmDialect(em: EntityManager): 'postgres' | 'mysql' | 'sqlite' {
  const connection = em.getConnection() as { getKnex?: () => KnexTransactionLike };
  const name = (em.getTransactionContext<KnexTransactionLike>() ?? connection.getKnex?.())?.client.dialect ?? '';
  if (name === 'postgresql' || name === 'pg') return 'postgres';
  if (name.startsWith('mysql') || name === 'mariadb') return 'mysql';
  if (name.startsWith('sqlite') || name === 'better-sqlite3' || name === 'libsql') return 'sqlite';
  throw new TypeError(`MikroORM: unsupported driver (Knex client "${name}"); use a SQL driver of MikroORM 6`);
}

/** The Knex transaction `em` runs in: the connection its statements, and Surety's, run on. */
export function transactionContextOf(em: EntityManager): KnexTransactionLike {
  const ctx = em.getTransactionContext<KnexTransactionLike>();
  if (typeof ctx?.raw !== 'function') {
    throw new TypeError('MikroORM: give the EntityManager of a running transaction (em.transactional(...))');
  }
  return ctx;
}

/**
 * One executor per transaction context, bound to the EntityManager it was first asked for: an
 * EntityManager may run one transaction after another (em.begin()), which must not inherit the
 * last one's queue or deadlock state.
 */
const executors = new WeakMap<KnexTransactionLike, OrmExecutor>();

/**
 * The one executor of the transaction `em` runs in. Surety's SQL goes to the Knex transaction's
 * `raw` with bound values, not to `em.execute`, which inlines values into the text and wraps the
 * driver's error (Surety reads the driver's SQLSTATE or errno, and binds its values as the raw stores do).
 */
export function executorForMikroOrm(em: EntityManager): OrmExecutor {
  const ctx = transactionContextOf(em);
  let tx = executors.get(ctx);
  if (!tx) {
    const dialect = mikroOrmDialect(em);
    tx = bindTransaction(
      ormExecutor(async (sql, values) => {
        await keepUnitOfWork(em, sql);
        // Knex reads every `?` as a binding; the text's own (none in Surety's SQL) are escaped.
        const { parts, values: bindings } = splitPlaceholders(dialect, sql, values);
        const text = parts.map((p) => (dialect === 'postgres' ? p.replaceAll('?', '\\?') : p)).join('?');
        return knexResult(dialect, await ctx.raw(text, bindings));
      }),
      em,
    );
    executors.set(ctx, tx);
  }
  return tx;
}

const SET_OR_RELEASE = /^\s*(?:RELEASE\s+)?SAVEPOINT\b/i;
const ROLLBACK_TO = /^\s*ROLLBACK\s+TO\b/i;

/**
 * Keeps the unit of work in step with Surety's savepoints (the consumer's, one per message when a
 * batch runs again), as MikroORM's nested transactions do with theirs: what a handler left to the
 * ORM to flush is flushed before a savepoint is set or released, and dropped when one is rolled
 * back; flushed only at the commit, a failed handler's entities would commit with the batch.
 */
async function keepUnitOfWork(em: EntityManager, sql: string): Promise<void> {
  if (ROLLBACK_TO.test(sql)) em.clear();
  else if (SET_OR_RELEASE.test(sql)) await em.flush();
}

/** The executor already made for the transaction context `ctx`, if any. */
export function executorOf(ctx: KnexTransactionLike): OrmExecutor | undefined {
  return executors.get(ctx);
}

/** Forgets the executor of `ctx` once its transaction committed or rolled back. */
export function endTransaction(ctx: KnexTransactionLike): void {
  executors.delete(ctx);
}

/** What `raw` resolves with, per client: pg's result, mysql2's `[rows, fields]`, better-sqlite3's rows or run result. */
function knexResult(dialect: string, res: unknown): SqlResult {
  if (dialect === 'mysql') return toSqlResult((res as unknown[])[0]);
  if (Array.isArray(res)) return sqlResult(res);
  const { rows, rowCount, changes } = res as { rows?: unknown[]; rowCount?: number | null; changes?: number };
  return sqlResult(rows, rowCount ?? changes);
}

/**
 * The EntityManager of the transaction a consumer's handler runs in, from its context's `tx`: its
 * writes (flushed before the commit) commit together with the inbox record.
 * @example
 * consumer.on('order.created', async (order: Order, ctx) => {
 *   mikroOrmTransactionOf(ctx.tx).create(Invoice, { orderId: order.id });
 * });
 */
export function mikroOrmTransactionOf<EM extends EntityManager = EntityManager>(tx: SqlExecutor): EM {
  return transactionOf<EM>('MikroORM', tx, 'surety/mikro-orm');
}
