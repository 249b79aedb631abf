import { StoreError } from '../../core/errors.js';

/**
 * The adapter edge's wrapper for driver errors: a driver error becomes a StoreError naming the
 * database, with the driver's error as its cause; a StoreError passes through unchanged.
 * @example
 * const storeError = storeErrorFor('PostgreSQL');
 * try { … } catch (err) { throw storeError(err); }
 */
export function storeErrorFor(database: string): (err: unknown) => StoreError {
  return (err) =>
    err instanceof StoreError ? err : new StoreError(`${database}: ${(err as Error).message}`, { cause: err });
}
