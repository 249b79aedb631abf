import { TransactionAbortedError, type StoreErrorCode } from '../../core/errors.js';
import { storeErrorFor } from '../sql/store-error.js';

/** PostgreSQL's SQLSTATE of a driver error, if it has one. */
const sqlState = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

/** 40001 serialization_failure, 40P01 deadlock_detected: the transaction was rolled back whole. */
const CONFLICTS = new Set(['40001', '40P01']);

/** The StoreError code of a pg error. */
export function postgresErrorCode(err: unknown): StoreErrorCode {
  return CONFLICTS.has(sqlState(err) as string) ? 'SURETY_STORE_CONFLICT' : 'SURETY_STORE_FAILED';
}

/** Driver errors of the store's own statements, as StoreError. */
export const storeError = storeErrorFor('PostgreSQL', postgresErrorCode);

/**
 * A statement refused with 25P02 (in_failed_sql_transaction) as a TransactionAbortedError: an earlier
 * statement of the transaction failed, so PostgreSQL has aborted it. Other errors are left as they are,
 * since they may be the caller's to read.
 */
export function abortedOr(err: unknown): unknown {
  if (sqlState(err) !== '25P02') return err;
  return new TransactionAbortedError(
    `PostgreSQL refused a statement of an aborted transaction (SQLSTATE 25P02): ${(err as Error).message}`,
    { cause: err },
  );
}
