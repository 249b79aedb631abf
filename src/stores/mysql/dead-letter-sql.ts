import { DEAD_LETTER_COLUMNS, failureValues } from '../sql/dead-letter-row.js';
import { countStatement, type DeadLetterStatements } from '../sql/dead-letters.js';
import type { TableNames } from '../sql/naming.js';
import { stepwiseDecision } from '../sql/stepwise-dead-letters.js';
import { adminDialect } from './admin-sql.js';

/** MySQL/MariaDB statements of the dead letters, one named function each. Placeholders are `?`, in text order. */

/** Index names; the claim forces them so stale statistics can never turn it into a table scan. */
export const deadLetterIndexNames = (prefix: string) => ({
  due: `${prefix}dead_letters_due`,
  lease: `${prefix}dead_letters_lease`,
});

const list = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * ? message id, ? group, ? topic, ? type, ? key, ? version, ? headers, ? body, ? body encoding, ? error,
 * ? poison, ? now, ? now, then for an existing row ? error, ? poison, ? now. The unique key decides
 * insert or update, so concurrent writers of one key queue on its row lock and each adds one attempt.
 * A resolved or ignored row starts over at 1 (attempts is assigned before anything reads a new status).
 * No VALUES(): deprecated in MySQL 8, and MariaDB lacks the row alias that replaces it.
 */
export const upsertFailure = (t: TableNames) => `INSERT INTO ${t.deadLetters} (message_id, group_name, topic, type,
  msg_key, version, headers, body, body_encoding, status, attempts, last_error, poison, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
  attempts = IF(status IN ('resolved', 'ignored'), 1, attempts + 1),
  last_error = ?, poison = ?, ignored_reason = NULL, updated_at = ?`;

// Reads the transaction's own write (InnoDB shows a transaction its changes even in a snapshot).
export const selectAttempts = (t: TableNames) =>
  `SELECT id, attempts FROM ${t.deadLetters} WHERE message_id = ? AND group_name = ?`;

/** ? status, ? next retry, ? now, ? id. Runs after upsertFailure, whose row lock it still holds. */
export const applyDecision = (t: TableNames) => `UPDATE ${t.deadLetters}
SET status = ?, next_retry_at = ?, claimed_by = NULL, lease_until = NULL, updated_at = ?
WHERE id = ?`;

/** ? now, ? group, ? limit. Replaying rows whose replayer's lease ran out. Run in READ COMMITTED (no gap locks). */
export const selectExpiredLeases = (t: TableNames, prefix: string) => `SELECT ${DEAD_LETTER_COLUMNS}
FROM ${t.deadLetters} FORCE INDEX (\`${deadLetterIndexNames(prefix).lease}\`)
WHERE status = 'replaying' AND lease_until <= ? AND group_name = ?
ORDER BY lease_until, id
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** ? now, ? group, ? limit. Pending rows due for a retry. Run in READ COMMITTED (no gap locks). */
export const selectDue = (t: TableNames, prefix: string) => `SELECT ${DEAD_LETTER_COLUMNS}
FROM ${t.deadLetters} FORCE INDEX (\`${deadLetterIndexNames(prefix).due}\`)
WHERE status = 'pending' AND next_retry_at <= ? AND group_name = ?
ORDER BY next_retry_at, id
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/**
 * ? owner, ? lease until, ? now, ? now, ? now, then `count` ids. The rows are locked by the selects
 * above; the condition repeats them so the update is a compare-and-set whatever happens.
 */
export const claimRows = (t: TableNames, count: number) => `UPDATE ${t.deadLetters}
SET status = 'replaying', claimed_by = ?, lease_until = ?, updated_at = ?
WHERE ((status = 'pending' AND next_retry_at <= ?) OR (status = 'replaying' AND lease_until <= ?))
  AND id IN (${list(count)})`;

// Resolving, rescheduling and ignoring are transitions that also write history: shared/dead-letter-transition.ts.

/** The settled rows' index (migration 4), forced by the purge. */
export const settledIndexName = (prefix: string) => `${prefix}dead_letters_settled`;

/**
 * ? before, ? limit. Settled rows unchanged since `before`, locked, passing over rows a new failure
 * is reopening. Unordered: across two statuses, ORDER BY updated_at would sort every match. Run in
 * READ COMMITTED (no gap locks).
 */
export const selectSettled = (t: TableNames, prefix: string) => `SELECT id
FROM ${t.deadLetters} FORCE INDEX (\`${settledIndexName(prefix)}\`)
WHERE status IN ('resolved', 'ignored') AND updated_at < ?
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** `count` ids, locked by selectSettled: nothing else can have changed them. */
export const deleteByIds = (t: TableNames, count: number) =>
  `DELETE FROM ${t.deadLetters} WHERE id IN (${list(count)})`;

/** `count` dead-letter ids: their history rows. */
export const deleteEvents = (t: TableNames, count: number) =>
  `DELETE FROM ${t.deadLetterEvents} WHERE dead_letter_id IN (${list(count)})`;

export const selectByKey = (t: TableNames) =>
  `SELECT ${DEAD_LETTER_COLUMNS} FROM ${t.deadLetters} WHERE message_id = ? AND group_name = ?`;

/** With `byGroup`, ? group. */
export const countByStatus = (t: TableNames, byGroup: boolean) =>
  `SELECT status, COUNT(*) AS n FROM ${t.deadLetters} ${byGroup ? 'WHERE group_name = ?' : ''} GROUP BY status`;

/**
 * The dead-letter statements the shared concern runs. MySQL has no RETURNING and no data-modifying
 * CTE: the upsert's row is read back, and changes and their history rows are separate statements,
 * in READ COMMITTED transactions (locking reads take no gap locks).
 */
export function deadLetterStatements(t: TableNames, prefix: string): DeadLetterStatements {
  return {
    dialect: adminDialect,
    upsertFailure: (f, error) => ({
      text: upsertFailure(t),
      values: [...failureValues(adminDialect, f, error), f.now, error, f.poison, f.now],
    }),
    selectAttempts: (messageId, group) => ({ text: selectAttempts(t), values: [messageId, group] }),
    applyDecision: stepwiseDecision(adminDialect, t, applyDecision(t)),
    claim: {
      mode: 'stepwise',
      selects: [
        (r, limit) => ({ text: selectExpiredLeases(t, prefix), values: [r.now, r.group, limit] }),
        (r, limit) => ({ text: selectDue(t, prefix), values: [r.now, r.group, limit] }),
      ],
      take: {
        chunk: Infinity,
        returnsRows: false,
        statement: (r, ids) => ({
          text: claimRows(t, ids.length),
          values: [r.owner, r.now + r.leaseMs, r.now, r.now, r.now, ...ids],
        }),
      },
    },
    transitionChunk: Infinity,
    selectByKey: (messageId, group) => ({ text: selectByKey(t), values: [messageId, group] }),
    countByStatus: countStatement((byGroup) => countByStatus(t, byGroup)),
    purgeSettled: {
      mode: 'stepwise',
      chunk: 500,
      select: (before, limit) => ({ text: selectSettled(t, prefix), values: [before, limit] }),
      deleteRows: (ids) => ({ text: deleteByIds(t, ids.length), values: ids }),
      deleteEvents: (ids) => ({ text: deleteEvents(t, ids.length), values: ids }),
    },
  };
}
