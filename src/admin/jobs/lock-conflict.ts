import { StoreError } from '../../core/errors.js';

/**
 * Whether `err` (or an error it wraps as `cause`) is the database ending a batch over a lock
 * conflict: a StoreError with code SURETY_STORE_CONFLICT (a deadlock victim, a serialization
 * failure) or SURETY_STORE_BUSY (SQLite's busy database, MySQL's lock wait timeout), as each store
 * translates its driver's codes. Such a batch rolled back whole and says nothing about the job:
 * running it again is the remedy.
 * @example
 * if (isLockConflict(err)) retryNow(); else countFailure(err);
 */
export function isLockConflict(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    if (e instanceof StoreError && (e.code === 'SURETY_STORE_CONFLICT' || e.code === 'SURETY_STORE_BUSY')) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
