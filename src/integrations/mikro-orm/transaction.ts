import type { EntityManager } from '@mikro-orm/core';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { refuseAbortedCommit } from '../shared/commit-check.js';
import type { CommitAnnouncer, OrmTransactions } from '../shared/orm-transaction.js';
import {
  endTransaction,
  executorForMikroOrm,
  executorOf,
  mikroOrmDialect,
  transactionContextOf,
  type KnexTransactionLike,
} from './executor.js';

/** MikroORM's transactions on `em`, as the shared ORM core runs them: each in a fork, flushed before the commit. */
export function mikroOrmTransactions(em: EntityManager): OrmTransactions<EntityManager> {
  return {
    dialect: mikroOrmDialect(em),
    run: (work) => em.transactional((fork) => work(fork)),
    executor: (fork) => executorForMikroOrm(fork),
  };
}

/** What the hook uses of MikroORM's connection: the commit and rollback every transaction of the ORM ends with. */
interface HookableConnection {
  commit(ctx: KnexTransactionLike, ...rest: unknown[]): Promise<void>;
  rollback(ctx: KnexTransactionLike, ...rest: unknown[]): Promise<void>;
}

const hooked = new WeakSet<object>();
/** The outboxes to announce the commit of each outermost transaction context to. */
const announcing = new WeakMap<KnexTransactionLike, Set<CommitAnnouncer>>();

/**
 * The executor of a MikroORM transaction, for `outbox.add` inside `em.transactional(...)` (or
 * between `em.begin()` and `em.commit()`). The ORM's connection commit is hooked: it first waits for
 * the statements issued on Surety's executors, and on PostgreSQL refuses to commit a transaction a
 * caught failed statement aborted (TransactionAbortedError; MikroORM then rolls back). Given
 * `outbox`, the commit announces itself to it (a rollback announces nothing), so you never call
 * `outbox.committed()`.
 * @example
 * await orm.em.transactional(async (em) => {
 *   em.create(Order, { id, total });
 *   await outbox.add(mikroOrmExecutor(em, outbox), { type: 'order.created', key: id, payload: { id, total } });
 * });
 */
export function mikroOrmExecutor(em: EntityManager, outbox?: CommitAnnouncer): SqlExecutor {
  const tx = executorForMikroOrm(em);
  const connection = em.getConnection('write') as unknown as HookableConnection;
  if (!hooked.has(connection)) hookCommit(connection, mikroOrmDialect(em));
  if (outbox) {
    const root = outermost(transactionContextOf(em));
    let outboxes = announcing.get(root);
    if (!outboxes) announcing.set(root, (outboxes = new Set()));
    outboxes.add(outbox);
  }
  return tx;
}

/**
 * Wraps the connection's commit and rollback once, for every transaction of the ORM: those that
 * Surety took no part in are left as they were. MikroORM commits each transaction context through
 * them, a nested one (a savepoint release) included; only the outermost commit is announced.
 */
function hookCommit(connection: HookableConnection, dialect: string): void {
  hooked.add(connection);
  const commit = connection.commit.bind(connection);
  const rollback = connection.rollback.bind(connection);
  connection.commit = async (ctx, ...rest) => {
    const tx = executorOf(ctx);
    if (tx) {
      await tx.drained();
      // Throws on the outermost commit: MikroORM rolls back and rejects with it.
      if (!ctx.parentTransaction) await refuseAbortedCommit(dialect, tx);
    }
    await commit(ctx, ...rest);
    endTransaction(ctx);
    if (ctx.parentTransaction) return;
    const heard = [...(announcing.get(ctx) ?? [])];
    announcing.delete(ctx);
    heard.forEach((o) => o.committed());
  };
  connection.rollback = async (ctx, ...rest) => {
    try {
      await rollback(ctx, ...rest);
    } finally {
      endTransaction(ctx);
      announcing.delete(ctx); // rolled back: nothing to announce
    }
  };
}

/** The transaction context whose commit is the real one: a nested one only releases a savepoint. */
function outermost(ctx: KnexTransactionLike): KnexTransactionLike {
  let t = ctx;
  while (t.parentTransaction) t = t.parentTransaction;
  return t;
}
