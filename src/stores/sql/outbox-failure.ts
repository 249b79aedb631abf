import type { FailureUpdate } from '../../ports/outbox-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { clipError } from './outbox-row.js';

/** The two statements of a failed publish in a dialect with `?` placeholders (each dialect's `outbox-sql.ts`). */
export interface OutboxFailureSql {
  /** ? attempts, ? next attempt at, ? status, ? error, ? seq, ? owner. */
  readonly recordFailure: string;
  /** ? attempt, ? at, ? outcome, ? error, ? actor, ? seq. */
  readonly insertAttempt: string;
}

/**
 * Records a failed publish and its history row in `tx`, for the dialects without a data-modifying
 * CTE (MySQL, SQLite), so both commit together. False when the row is no longer the owner's to
 * update (its claim was lost), and then no history row is written; nor is one for an uncharged failure.
 */
export async function recordOutboxFailure(tx: SqlExecutor, sql: OutboxFailureSql, u: FailureUpdate): Promise<boolean> {
  const error = clipError(u.error);
  const res = await tx.query(sql.recordFailure, [
    u.attempts,
    u.nextAttemptAt,
    u.dead ? 'dead' : 'pending',
    error,
    u.seq,
    u.owner,
  ]);
  if (res.rowCount !== 1) return false;
  if (u.charged === false) return true; // attempts unchanged: not an attempt, so no history row
  await tx.query(sql.insertAttempt, [
    u.attempts,
    u.now ?? Date.now(),
    u.dead ? 'dead' : 'failed',
    error,
    u.owner,
    u.seq,
  ]);
  return true;
}
