import type { Knex } from 'knex';
import type { Store } from '../../ports/store.js';
import { ormStore } from '../shared/orm-store.js';
import { runOrmTransaction } from '../shared/orm-transaction.js';
import { knexTransactions } from './transaction.js';

/**
 * `store` with its transactions run through Knex on `knex` (the same database): a consumer's
 * handler writes with `knexTransactionOf(ctx.tx)` and those writes commit with its inbox record,
 * and `outbox.transaction` runs a Knex transaction.
 * @example
 * const consumer = new Consumer({ group: 'billing', store: knexStore(store, knex), transport });
 */
export function knexStore<S extends Store>(store: S, knex: Knex): S {
  const orm = knexTransactions(knex);
  return ormStore(store, (work) => runOrmTransaction(orm, (_trx, tx) => work(tx)));
}
