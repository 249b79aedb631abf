import type { Store } from '../../ports/store.js';
import { ormStore } from '../shared/orm-store.js';
import { runOrmTransaction } from '../shared/orm-transaction.js';
import { prismaTransactions, type PrismaClientLike, type PrismaTransactionOptions } from './transaction.js';

/**
 * `store` with its transactions run through Prisma's interactive transactions on `prisma` (the same
 * database): a consumer's handler writes with `prismaTransactionOf(ctx.tx)` and those writes commit
 * with its inbox record, and `outbox.transaction` runs a Prisma transaction.
 * @example
 * const consumer = new Consumer({ group: 'billing', store: prismaStore(store, prisma), transport });
 */
export function prismaStore<S extends Store>(
  store: S,
  prisma: PrismaClientLike,
  options?: PrismaTransactionOptions,
): S {
  const orm = prismaTransactions(prisma, options);
  return ormStore(store, (work) => runOrmTransaction(orm, (_trx, tx) => work(tx)));
}
