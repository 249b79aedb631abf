import { AsyncLocalStorage } from 'node:async_hooks';
import { SuretyError } from '../../core/errors.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';

/** The ORM transaction behind each executor an adapter made. */
const bound = new WeakMap<SqlExecutor, object>();

/**
 * The ORM transaction of the work running now. The consumer and `outbox.transaction` hand their work
 * views of the executor (refusing late statements, gating a failed batch), not the executor itself:
 * those views run inside the work's async context, so they are found through it.
 */
const current = new AsyncLocalStorage<object>();

/** Records that `tx` runs its statements in the ORM transaction `trx`. */
export function bindTransaction<E extends SqlExecutor>(tx: E, trx: object): E {
  bound.set(tx, trx);
  return tx;
}

/** Runs `work` with `trx` as the ORM transaction that {@link transactionOf} finds for any view of its executor. */
export function withTransaction<T>(trx: object, work: () => Promise<T>): Promise<T> {
  return current.run(trx, work);
}

/**
 * The ORM transaction behind `tx`: the one it was made for, else that of the adapter's transaction
 * running now. Throws when there is none, rather than letting a handler write outside its transaction.
 * `entryPoint` names the adapter's import in that error (by default the ORM's name in lower case).
 */
export function transactionOf<T>(orm: string, tx: SqlExecutor, entryPoint = `surety/${orm.toLowerCase()}`): T {
  const trx = bound.get(tx) ?? current.getStore();
  if (trx === undefined) {
    throw new SuretyError(
      'SURETY_INVALID_INPUT',
      `${orm}: this executor does not belong to a ${orm} transaction; run the work through the ${orm} store or transaction helper of ${entryPoint}`,
    );
  }
  return trx as T;
}
