import { DEAD_LETTER_COLUMNS, failureValues } from '../sql/dead-letter-row.js';
import { countStatement, type DeadLetterStatements } from '../sql/dead-letters.js';
import type { TableNames } from '../sql/naming.js';
import { stepwiseDecision } from '../sql/stepwise-dead-letters.js';
import { adminDialect } from './admin-sql.js';

/** SQLite statements of the dead letters, one named function each. Placeholders are `?`, in text order. */

/** Index names; the claim names them with INDEXED BY (see selectClaimable). */
export const deadLetterIndexNames = (prefix: string) => ({
  due: `${prefix}dead_letters_due`,
  lease: `${prefix}dead_letters_lease`,
});

/** The history rows' index, named by the purge with INDEXED BY. */
const eventsIndexName = (prefix: string) => `${prefix}dead_letter_events_row`;

/**
 * ? message id, ? group, ? topic, ? type, ? key, ? version, ? headers, ? body, ? body encoding, ? error,
 * ? poison, ? now, ? now. The unique key decides insert or update; a resolved or ignored row starts over at 1.
 */
export const upsertFailure = (t: TableNames) => `INSERT INTO ${t.deadLetters} (message_id, group_name, topic, type,
  msg_key, version, headers, body, body_encoding, status, attempts, last_error, poison, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1, ?, ?, ?, ?)
ON CONFLICT (message_id, group_name) DO UPDATE SET
  attempts = CASE WHEN status IN ('resolved', 'ignored') THEN 1 ELSE attempts + 1 END,
  last_error = excluded.last_error, poison = excluded.poison, ignored_reason = NULL, updated_at = excluded.updated_at
RETURNING id, attempts`;

/** ? status, ? next retry, ? now, ? id. */
export const applyDecision = (t: TableNames) => `UPDATE ${t.deadLetters}
SET status = ?, next_retry_at = ?, claimed_by = NULL, lease_until = NULL, updated_at = ?
WHERE id = ?`;

/**
 * ? now, ? group, ? limit for expired leases (first: their replayer died), ? now, ? group, ? limit for
 * due rows, and ? limit overall: the ids a claim takes. INDEXED BY pins the partial indexes whatever
 * ANALYZE recorded. Run with {@link claimRow} in one transaction, whose write lock makes the claim
 * atomic; rows are taken one key each, as in outbox-sql.ts.
 */
export const selectClaimable = (t: TableNames, prefix: string) => `SELECT id FROM (
  SELECT id FROM ${t.deadLetters} INDEXED BY "${deadLetterIndexNames(prefix).lease}"
  WHERE status = 'replaying' AND lease_until <= ? AND group_name = ? ORDER BY lease_until, id LIMIT ?)
UNION ALL
SELECT id FROM (
  SELECT id FROM ${t.deadLetters} INDEXED BY "${deadLetterIndexNames(prefix).due}"
  WHERE status = 'pending' AND next_retry_at <= ? AND group_name = ? ORDER BY next_retry_at, id LIMIT ?)
LIMIT ?`;

/** ? owner, ? lease until, ? now, ? id. */
export const claimRow = (t: TableNames) => `UPDATE ${t.deadLetters}
SET status = 'replaying', claimed_by = ?, lease_until = ?, updated_at = ?
WHERE id = ?
RETURNING ${DEAD_LETTER_COLUMNS}`;

// Resolving, rescheduling and ignoring are transitions that also write history: shared/dead-letter-transition.ts.

/** The settled rows' partial index (migration 4), named by the purge with INDEXED BY. */
export const settledIndexName = (prefix: string) => `${prefix}dead_letters_settled`;

/** ? before, ? limit. Settled rows unchanged since `before`, oldest first. */
export const selectSettled = (t: TableNames, prefix: string) => `SELECT id
FROM ${t.deadLetters} INDEXED BY "${settledIndexName(prefix)}"
WHERE status IN ('resolved', 'ignored') AND updated_at < ?
ORDER BY updated_at
LIMIT ?`;

/** ? id from selectSettled, in the same exclusive transaction; one key each, as in outbox-sql.ts. */
export const deleteById = (t: TableNames) => `DELETE FROM ${t.deadLetters} WHERE id = ?`;

/** ? dead-letter id: its history rows. */
export const deleteEvents = (t: TableNames, prefix: string) =>
  `DELETE FROM ${t.deadLetterEvents} INDEXED BY "${eventsIndexName(prefix)}" WHERE dead_letter_id = ?`;

export const selectByKey = (t: TableNames) =>
  `SELECT ${DEAD_LETTER_COLUMNS} FROM ${t.deadLetters} WHERE message_id = ? AND group_name = ?`;

/** With `byGroup`, ? group. */
export const countByStatus = (t: TableNames, byGroup: boolean) =>
  `SELECT status, count(*) AS n FROM ${t.deadLetters} ${byGroup ? 'WHERE group_name = ?' : ''} GROUP BY status`;

/**
 * The dead-letter statements the shared concern runs. SQLite has no data-modifying CTE, binds no
 * booleans (poison travels as 0/1), and may plan a list of ids as a table scan: rows are taken,
 * changed and deleted one key each, in BEGIN IMMEDIATE transactions (in-process, no round trips).
 */
export function deadLetterStatements(t: TableNames, prefix: string): DeadLetterStatements {
  return {
    dialect: adminDialect,
    upsertFailure: (f, error) => ({
      text: upsertFailure(t),
      values: [...failureValues(adminDialect, f, error), f.now],
    }),
    applyDecision: stepwiseDecision(adminDialect, t, applyDecision(t)),
    claim: {
      mode: 'stepwise',
      selects: [
        (r, limit) => ({
          text: selectClaimable(t, prefix),
          values: [r.now, r.group, limit, r.now, r.group, limit, limit],
        }),
      ],
      take: {
        chunk: 1,
        returnsRows: true,
        statement: (r, ids) => ({ text: claimRow(t), values: [r.owner, r.now + r.leaseMs, r.now, ids[0]] }),
      },
    },
    transitionChunk: 1,
    selectByKey: (messageId, group) => ({ text: selectByKey(t), values: [messageId, group] }),
    countByStatus: countStatement((byGroup) => countByStatus(t, byGroup)),
    purgeSettled: {
      mode: 'stepwise',
      chunk: 1,
      select: (before, limit) => ({ text: selectSettled(t, prefix), values: [before, limit] }),
      deleteRows: (ids) => ({ text: deleteById(t), values: ids }),
      deleteEvents: (ids) => ({ text: deleteEvents(t, prefix), values: ids }),
    },
  };
}
