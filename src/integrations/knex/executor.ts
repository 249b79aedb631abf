import type { Knex } from 'knex';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { toSqlResult } from '../../stores/mysql/executor.js';
import { executorFor, sqlResult, type OrmExecutor } from '../shared/orm-executor.js';
import { splitPlaceholders } from '../shared/placeholders.js';
import { transactionOf } from '../shared/transaction-binding.js';

/** Surety's dialect name for a Knex client's. */
export function knexDialect(knex: Knex | Knex.Transaction): 'postgres' | 'mysql' | 'sqlite' {
  const name = (knex.client as { dialect?: string }).dialect ?? '';
  if (name === 'postgresql' || name === 'pg' || name === 'cockroachdb') return 'postgres';
  if (name.startsWith('mysql')) return 'mysql';
  return 'sqlite';
}

/** The one executor of a Knex transaction: Surety's SQL through `trx.raw`, with Knex's `?` placeholders. */
export function executorForKnex(trx: Knex.Transaction): OrmExecutor {
  const dialect = knexDialect(trx);
  return executorFor(trx, async (sql, values) => {
    // Knex reads every `?` as a binding; the text's own (none in Surety's SQL) are escaped.
    const { parts, values: bindings } = splitPlaceholders(dialect, sql, values);
    const text = parts.map((p) => (dialect === 'postgres' ? p.replaceAll('?', '\\?') : p)).join('?');
    return knexResult(dialect, await trx.raw(text, bindings as Knex.RawBinding[]));
  });
}

/** What `raw` resolves with, per client: pg's result, mysql2's `[rows, fields]`, better-sqlite3's rows or run result. */
function knexResult(dialect: string, res: unknown): SqlResult {
  if (dialect === 'mysql') return toSqlResult((res as unknown[])[0]);
  if (Array.isArray(res)) return sqlResult(res);
  const { rows, rowCount, changes } = res as { rows?: unknown[]; rowCount?: number | null; changes?: number };
  return sqlResult(rows, rowCount ?? changes);
}

/**
 * The Knex transaction a consumer's handler runs in, from its context's `tx`: its writes commit
 * together with the inbox record.
 * @example
 * consumer.on('order.created', async (order: Order, ctx) => {
 *   await knexTransactionOf(ctx.tx)('invoices').insert({ order_id: order.id });
 * });
 */
export function knexTransactionOf(tx: SqlExecutor): Knex.Transaction {
  return transactionOf<Knex.Transaction>('Knex', tx);
}
