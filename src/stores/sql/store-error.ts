import { StoreError, type StoreErrorCode } from '../../core/errors.js';

/**
 * The adapter edge's wrapper for driver errors: a driver error becomes a StoreError naming the
 * database, with the code the dialect reads from the driver's error and that error as its cause; a
 * StoreError passes through unchanged.
 * @example
 * const storeError = storeErrorFor('PostgreSQL', postgresErrorCode);
 * try { … } catch (err) { throw storeError(err); }
 */
export function storeErrorFor(
  database: string,
  codeOf: (err: unknown) => StoreErrorCode,
): (err: unknown) => StoreError {
  return (err) =>
    err instanceof StoreError
      ? err
      : new StoreError(`${database}: ${(err as Error).message}`, { cause: err, code: codeOf(err) });
}
