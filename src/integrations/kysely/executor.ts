import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { executorFor, sqlResult } from '../shared/orm-executor.js';
import { transactionOf } from '../shared/transaction-binding.js';

/**
 * The executor of a Kysely transaction, for `outbox.add` and the store's statements inside it. SQL
 * goes through the transaction's own connection as written (the dialect's placeholders).
 * @example
 * await kyselyTransaction(db, outbox, async (trx) => {
 *   await trx.insertInto('orders').values(order).execute();
 *   await outbox.add(kyselyExecutor(trx), { type: 'order.created', key: order.id, payload: order });
 * });
 */
export function kyselyExecutor<DB>(trx: Kysely<DB>): SqlExecutor {
  return executorForKysely(trx);
}

/** @internal The executor with its drain, for the transaction helper. */
export function executorForKysely<DB>(trx: Kysely<DB>) {
  return executorFor(trx, async (sql, values) => {
    const res = await trx.executeQuery(CompiledQuery.raw(sql, [...values]));
    return sqlResult(res.rows as unknown[], res.numAffectedRows, res.insertId);
  });
}

/**
 * The Kysely transaction a consumer's handler runs in, from its context's `tx`: its writes commit
 * together with the inbox record.
 * @example
 * consumer.on('order.created', async (order: Order, ctx) => {
 *   await kyselyTransactionOf<DB>(ctx.tx).insertInto('invoices').values({ orderId: order.id }).execute();
 * });
 */
export function kyselyTransactionOf<DB>(tx: SqlExecutor): Transaction<DB> {
  return transactionOf<Transaction<DB>>('Kysely', tx);
}
