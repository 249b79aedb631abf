import type { EntityManager } from '@mikro-orm/core';
import type { Store } from '../../ports/store.js';
import { abortedOr } from '../../stores/postgres/errors.js';
import { ormStore } from '../shared/orm-store.js';
import { runOrmTransaction } from '../shared/orm-transaction.js';
import { executorForMikroOrm } from './executor.js';
import { mikroOrmTransactions } from './transaction.js';

/**
 * `store` with its transactions run through MikroORM on `orm` (or its EntityManager; the same
 * database): a consumer's handler writes with `mikroOrmTransactionOf(ctx.tx)` and those writes
 * commit with its inbox record, and `outbox.transaction` runs `em.transactional`, each in a fork.
 * @example
 * const consumer = new Consumer({ group: 'billing', store: mikroOrmStore(store, orm), transport });
 */
export function mikroOrmStore<S extends Store>(store: S, orm: { em: EntityManager } | EntityManager): S {
  const em = 'em' in orm ? orm.em : orm;
  const transactions = mikroOrmTransactions(em);
  return ormStore(store, (work) =>
    runOrmTransaction(transactions, async (fork, tx) => {
      const result = await work(tx);
      await flushBeforeCommit(fork);
      return result;
    }),
  );
}

/**
 * Flushes what the work left to the ORM before the commit check, so that on PostgreSQL a flush
 * refused in an aborted transaction fails as TransactionAbortedError (a consumer then runs each
 * message again alone) rather than as MikroORM's wrapped driver error.
 */
async function flushBeforeCommit(fork: EntityManager): Promise<void> {
  await executorForMikroOrm(fork).drained(); // one statement at a time on the connection
  try {
    await fork.flush();
  } catch (err) {
    throw abortedOr(err);
  }
}
