import type { Kysely } from 'kysely';
import type { Store } from '../../ports/store.js';
import { ormStore } from '../shared/orm-store.js';
import { runOrmTransaction } from '../shared/orm-transaction.js';
import { kyselyTransactions } from './transaction.js';

/**
 * `store` with its transactions run through Kysely on `db` (the same database): a consumer's
 * handler writes with `kyselyTransactionOf(ctx.tx)` and those writes commit with its inbox record,
 * and `outbox.transaction` runs a Kysely transaction.
 * @example
 * const consumer = new Consumer({ group: 'billing', store: kyselyStore(store, db), transport });
 */
export function kyselyStore<S extends Store, DB>(store: S, db: Kysely<DB>): S {
  const orm = kyselyTransactions(db);
  return ormStore(store, (work) => runOrmTransaction(orm, (_trx, tx) => work(tx)));
}
