import type { FailureUpdate } from '../../ports/outbox-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { TableNames } from './naming.js';
import { clipError } from './outbox-row.js';

/** The two statements of a failed publish in a dialect with `?` placeholders (see {@link stepwiseFailureSql}). */
export interface OutboxFailureSql {
  /** ? attempts, ? next attempt at, ? status, ? error, ? seq, ? owner. */
  readonly recordFailure: string;
  /** ? attempt, ? at, ? outcome, ? error, ? actor, ? seq. */
  readonly insertAttempt: string;
}

/**
 * The two statements in the dialects that take `?` placeholders (MySQL, SQLite). The history row
 * is written after the update, in its transaction, which holds the row.
 */
export const stepwiseFailureSql = (t: TableNames): OutboxFailureSql => ({
  recordFailure: `UPDATE ${t.outbox}
SET attempts = ?, next_attempt_at = ?, status = ?, last_error = ?, claimed_by = NULL
WHERE seq = ? AND claimed_by = ? AND status = 'pending'`,
  insertAttempt: `INSERT INTO ${t.outboxAttempts} (message_id, attempt, at, outcome, error, actor)
SELECT message_id, ?, ?, ?, ?, ? FROM ${t.outbox} WHERE seq = ?`,
});

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
