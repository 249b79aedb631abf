import { StoreError } from '../../core/errors.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { insertOutboxAttempts, lockOutboxRows } from './admin-sql.js';
import type { DialectAdminSql } from './admin-context.js';
import type { TableNames } from './naming.js';

/**
 * Resends outbox rows (any status) in the caller's transaction: locks them, makes them pending and
 * due at `now` with attempts reset to 0 and the claim dropped, and records a `resent` attempt for
 * each, with the time the broker had confirmed the copy it replaces. The message id stays, so consumers' inboxes still recognise it. Returns how many.
 */
export async function resendOutboxRows(
  tx: SqlExecutor,
  sql: DialectAdminSql,
  t: TableNames,
  by: { seqs: readonly number[] } | { messageId: string },
  actor: string,
  now: number,
): Promise<number> {
  if ('seqs' in by && by.seqs.length === 0) return 0;
  if (sql.lockOutboxQueue) {
    const queue = sql.lockOutboxQueue(t, by);
    await tx.query(queue.text, queue.values);
  }
  const lock = lockOutboxRows(sql.adminDialect, t, by);
  const { rows } = await tx.query(lock.text, lock.values);
  if (rows.length === 0) return 0;
  const update = sql.resendOutbox(
    t,
    rows.map((r) => Number(r.seq)),
    now,
  );
  const updated = await tx.query(update.text, update.values);
  if (updated.rowCount !== rows.length) throw new StoreError('an outbox resend lost rows it had locked');
  const attempts = insertOutboxAttempts(
    sql.adminDialect,
    t,
    rows.map((r) => ({
      messageId: String(r.message_id),
      attempt: 0,
      at: now,
      outcome: 'resent',
      error: null,
      actor,
      // The row's sent time is about to go: the timeline keeps that confirm in the resend's history row.
      confirmedAt: r.sent_at === null || r.sent_at === undefined ? null : Number(r.sent_at),
    })),
  );
  await tx.query(attempts.text, attempts.values);
  return rows.length;
}
