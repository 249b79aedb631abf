import { SuretyError } from '../core/errors.js';
import type { VersionGuardKey, VersionGuardStore } from '../ports/consumer-store.js';
import type { SqlExecutor } from '../ports/sql-executor.js';

/** Longest scope and key a guard holds (the columns are VARCHAR(200)). */
const MAX_LENGTH = 200;
/** Below every version a producer can send: holding a guard at it raises nothing that exists. */
const LOWEST = Number.MIN_SAFE_INTEGER;

/**
 * The consumer group's version guards, in the handler's transaction. A guard keeps the highest
 * version applied per (scope, key) in a table of the consumer's database, so a state is applied only
 * when it is newer: across processes, out of order, and on the first write of a key too, when no
 * local row exists yet to lock. `fetchBack` uses it; handlers of versioned full-state messages can too.
 * @example
 * consumer.on('price.set', async (price: { amount: number; version: number }, { tx, envelope, versions }) => {
 *   if (!(await versions.raise('prices', envelope.key, price.version))) return; // as new or newer was applied
 *   await tx.query('INSERT INTO prices (sku, amount) VALUES ($1, $2) ON CONFLICT (sku) DO UPDATE SET amount = $2', [
 *     envelope.key,
 *     price.amount,
 *   ]);
 * });
 */
export interface VersionGuard {
  /**
   * Raises the guard of (scope, key) to `version` (a safe integer) when that is higher than the
   * version committed, and tells whether it did. A raise of the same guard in another transaction
   * waits until that one ends (on PostgreSQL in REPEATABLE READ or SERIALIZABLE it fails with a
   * serialization error instead, and the message is retried). It commits or rolls back with the
   * handler's transaction.
   */
  raise(scope: string, key: string, version: number): Promise<boolean>;
  /** Holds the guard of (scope, key) until the transaction ends, raising nothing: a concurrent raise waits. */
  hold(scope: string, key: string): Promise<void>;
}

/** The guards of `group`, written in `tx`. */
export function versionGuard(store: VersionGuardStore, group: string, tx: SqlExecutor): VersionGuard {
  return {
    raise: async (scope, key, version) => {
      const guard = checkedGuard(group, scope, key);
      if (!Number.isSafeInteger(version)) {
        throw invalid(`the version of "${scope}" key "${key}" must be a safe integer, got ${String(version)}`);
      }
      return store.raiseVersion(tx, guard, version);
    },
    hold: async (scope, key) => void (await store.raiseVersion(tx, checkedGuard(group, scope, key), LOWEST)),
  };
}

function checkedGuard(group: string, scope: string, key: string): VersionGuardKey {
  if (typeof scope !== 'string' || scope.length === 0 || scope.length > MAX_LENGTH) {
    throw invalid(`scope must be a string of 1-${MAX_LENGTH} characters, got ${described(scope)}`);
  }
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_LENGTH) {
    throw invalid(`key must be a string of 1-${MAX_LENGTH} characters, got ${described(key)}`);
  }
  return { group, scope, key };
}

const described = (v: unknown) => (typeof v === 'string' ? `${v.length} characters` : typeof v);
const invalid = (detail: string) => new SuretyError('SURETY_INVALID_INPUT', `version guard: ${detail}`);
