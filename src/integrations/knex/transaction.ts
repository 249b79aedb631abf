import type { Knex } from 'knex';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { refuseAbortedCommit } from '../shared/commit-check.js';
import type { CommitAnnouncer, OrmTransactions } from '../shared/orm-transaction.js';
import { executorForKnex, knexDialect } from './executor.js';

/** Knex's transactions on `knex`, as the shared ORM core runs them. */
export function knexTransactions(knex: Knex): OrmTransactions<Knex.Transaction> {
  return {
    dialect: knexDialect(knex),
    run: (work) => knex.transaction(work),
    executor: (trx) => executorForKnex(trx),
  };
}

const armed = new WeakSet<Knex.Transaction>();
const announcing = new WeakMap<Knex.Transaction, Set<CommitAnnouncer>>();

/**
 * The executor of a Knex transaction, for `outbox.add` inside `knex.transaction(...)`. Knex's commit
 * is hooked: it first waits for the statements issued on this executor, and on PostgreSQL refuses to
 * commit a transaction a caught failed statement aborted (TransactionAbortedError, rolled back).
 * Given `outbox`, the transaction's promise announces the commit to it (a rollback announces
 * nothing), so you never call `outbox.committed()`.
 * @example
 * await knex.transaction(async (trx) => {
 *   await trx('orders').insert({ id, total });
 *   await outbox.add(knexExecutor(trx, outbox), { type: 'order.created', key: id, payload: { id, total } });
 * });
 */
export function knexExecutor(trx: Knex.Transaction, outbox?: CommitAnnouncer): SqlExecutor {
  const tx = executorForKnex(trx);
  const root = outermost(trx);
  if (!armed.has(root)) {
    armed.add(root);
    const commit = root.commit.bind(root);
    const rollback = root.rollback.bind(root);
    const dialect = knexDialect(root);
    // Knex calls the transactor's `commit` when the container resolves, and so does the caller's own trx.commit().
    root.commit = (async (value?: unknown) => {
      try {
        await tx.drained();
        await refuseAbortedCommit(dialect, executorForKnex(root));
      } catch (err) {
        return rollback(err);
      }
      return commit(value);
    }) as Knex.Transaction['commit'];
  }
  if (outbox) announceCommit(root, outbox);
  return tx;
}

/** Announces the commit of `root` to `outbox` once, whichever of its executors named it. */
function announceCommit(root: Knex.Transaction, outbox: CommitAnnouncer): void {
  let outboxes = announcing.get(root);
  if (!outboxes) {
    const listeners = new Set<CommitAnnouncer>();
    announcing.set(root, (outboxes = listeners));
    root.executionPromise.then(
      () => listeners.forEach((o) => o.committed()),
      () => undefined, // rolled back: nothing to announce
    );
  }
  outboxes.add(outbox);
}

/** The transaction whose commit is the real one: a nested Knex transaction only releases a savepoint. */
function outermost(trx: Knex.Transaction): Knex.Transaction {
  let t = trx;
  while ((t as { parentTransaction?: Knex.Transaction }).parentTransaction)
    t = (t as { parentTransaction?: Knex.Transaction }).parentTransaction!;
  return t;
}
