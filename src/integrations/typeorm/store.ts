import type { DataSource } from 'typeorm';
import type { Store } from '../../ports/store.js';
import { ormStore } from '../shared/orm-store.js';
import { runOrmTransaction } from '../shared/orm-transaction.js';
import { typeormTransactions } from './transaction.js';

/**
 * `store` with its transactions run through TypeORM on `dataSource` (the same database): a
 * consumer's handler writes with `typeormTransactionOf(ctx.tx)` and those writes commit with its
 * inbox record, and `outbox.transaction` runs a TypeORM transaction.
 * @example
 * const consumer = new Consumer({ group: 'billing', store: typeormStore(store, dataSource), transport });
 */
export function typeormStore<S extends Store>(store: S, dataSource: DataSource): S {
  const orm = typeormTransactions(dataSource);
  return ormStore(store, (work) => runOrmTransaction(orm, (_trx, tx) => work(tx)));
}
