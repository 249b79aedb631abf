import type { Store } from '../../ports/store.js';
import { ormStore } from '../shared/orm-store.js';
import { runOrmTransaction } from '../shared/orm-transaction.js';
import { drizzleTransactions } from './transaction.js';

/**
 * `store` with its transactions run through Drizzle on `db` (the same database): a consumer's
 * handler writes with `drizzleTransactionOf(ctx.tx)` and those writes commit with its inbox record,
 * and `outbox.transaction` runs a Drizzle transaction.
 * @example
 * const consumer = new Consumer({ group: 'billing', store: drizzleStore(store, db), transport });
 */
export function drizzleStore<S extends Store>(store: S, db: object): S {
  const orm = drizzleTransactions(db);
  return ormStore(store, (work) => runOrmTransaction(orm, (_trx, tx) => work(tx)));
}
