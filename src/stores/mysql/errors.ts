import { someCause, type StoreErrorCode } from '../../core/errors.js';
import { storeErrorFor } from '../sql/store-error.js';

const errnoOf = (err: unknown): unknown => (err as { errno?: unknown } | null)?.errno;

/** errno 1062 (ER_DUP_ENTRY), also when an ORM adapter wrapped the driver error as its cause. */
export function isDuplicateKey(err: unknown): boolean {
  return someCause(
    err,
    (e) => {
      const { errno, code } = e as { errno?: unknown; code?: unknown };
      return errno === 1062 || code === 'ER_DUP_ENTRY';
    },
    5,
  );
}

/** errno 1213 (ER_LOCK_DEADLOCK): InnoDB chose this transaction as a deadlock victim and rolled all of it back. */
export function isDeadlock(err: unknown): boolean {
  return errnoOf(err) === 1213;
}

/** errno 1061 (ER_DUP_KEYNAME): the index a migration adds is already there. */
export function isDuplicateKeyName(err: unknown): boolean {
  return errnoOf(err) === 1061;
}

/** errno 1060 (ER_DUP_FIELDNAME): the column a migration adds is already there. */
export function isDuplicateColumn(err: unknown): boolean {
  return errnoOf(err) === 1060;
}

/** errno 1205 (ER_LOCK_WAIT_TIMEOUT): a lock was not granted in time; InnoDB rolled back only the statement. */
export function isLockWaitTimeout(err: unknown): boolean {
  return errnoOf(err) === 1205;
}

/** The StoreError code of a mysql2 error. */
export function mysqlErrorCode(err: unknown): StoreErrorCode {
  if (isDeadlock(err)) return 'SURETY_STORE_CONFLICT';
  return isLockWaitTimeout(err) ? 'SURETY_STORE_BUSY' : 'SURETY_STORE_FAILED';
}

/** Driver errors of the store's own statements, as StoreError. */
export const storeError = storeErrorFor('MySQL', mysqlErrorCode);
