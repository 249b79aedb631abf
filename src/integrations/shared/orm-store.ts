import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';

type Transaction = <T>(work: (tx: SqlExecutor) => Promise<T>) => Promise<T>;

/**
 * A dialect store whose transactions run through an ORM: the consumer's (inbox records and the
 * handlers' writes) and `outbox.transaction`'s. Everything else (claims, marks, admin) stays on the
 * store's own connection.
 */
export function ormStore<S extends Store>(store: S, transaction: Transaction): S {
  return Object.freeze({
    ...store,
    // Not frozen, like the dialect store's: wrappers derive an outbox from it.
    outbox: { ...store.outbox, transaction },
    transaction,
  });
}
