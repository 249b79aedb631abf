import type { StoreErrorCode } from '../../core/errors.js';
import { storeErrorFor } from '../sql/store-error.js';

/** SQLite's result code of a driver error (`SQLITE_BUSY_SNAPSHOT`...), if it has one. */
const resultCode = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/** SQLITE_BUSY and SQLITE_LOCKED with their extended codes: another connection holds the lock. */
export function sqliteErrorCode(err: unknown): StoreErrorCode {
  const code = resultCode(err);
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')
    ? 'SURETY_STORE_BUSY'
    : 'SURETY_STORE_FAILED';
}

/** Driver errors of the store's own statements, as StoreError. */
export const storeError = storeErrorFor('SQLite', sqliteErrorCode);
