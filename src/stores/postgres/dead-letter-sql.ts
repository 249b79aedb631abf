import { DEAD_LETTER_COLUMNS, deadLetterColumns, failureValues } from '../sql/dead-letter-row.js';
import { countStatement, type DeadLetterStatements } from '../sql/dead-letters.js';
import type { TableNames } from '../sql/naming.js';
import { clipError } from '../sql/outbox-row.js';
import { adminDialect } from './admin-sql.js';
import { hasStatus } from './status-filter.js';

/** PostgreSQL statements of the dead letters, one named function each. */

/**
 * $1 message id, $2 group, $3 topic, $4 type, $5 key, $6 version, $7 headers, $8 body, $9 body encoding,
 * $10 error, $11 poison, $12 now. The unique key decides insert or update, so concurrent writers of one
 * key queue on its row lock and each adds one attempt. A resolved or ignored row starts over at 1.
 */
export const upsertFailure = (t: TableNames) => `INSERT INTO ${t.deadLetters} AS d (message_id, group_name, topic, type,
  msg_key, version, headers, body, body_encoding, status, attempts, last_error, poison, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', 1, $10, $11, $12, $12)
ON CONFLICT (message_id, group_name) DO UPDATE SET
  attempts = CASE WHEN d.status IN ('resolved', 'ignored') THEN 1 ELSE d.attempts + 1 END,
  last_error = EXCLUDED.last_error, poison = EXCLUDED.poison, ignored_reason = NULL, updated_at = EXCLUDED.updated_at
RETURNING id, attempts`;

const EVENT_COLUMNS = 'dead_letter_id, message_id, group_name, at, kind, attempt, detail, actor';

/**
 * $1 id, $2 status, $3 next retry, $4 now, $5 error. Runs after upsertFailure, whose row lock it
 * still holds, and records the failure ('dead' when the decision is) in the same statement.
 */
export const applyDecision = (t: TableNames) => `WITH d AS (
  UPDATE ${t.deadLetters}
  SET status = $2, next_retry_at = $3, claimed_by = NULL, lease_until = NULL, updated_at = $4
  WHERE id = $1
  RETURNING id, message_id, group_name, attempts, status)
INSERT INTO ${t.deadLetterEvents} (${EVENT_COLUMNS})
SELECT id, message_id, group_name, $4::bigint, CASE WHEN status = 'dead' THEN 'dead' ELSE 'failed' END, attempts,
  $5::text, NULL FROM d`;

/**
 * $1 now, $2 limit, $3 owner, $4 lease until. Expired leases first (their replayer died), then due
 * rows; each branch walks its partial index under SKIP LOCKED (plan forced with CLAIM_PLAN_SETTINGS).
 * Locking re-checks the status on the newest row version, so a row another replayer just took drops
 * out: each claim is a compare-and-set.
 */
export const claimDue = (t: TableNames) => `UPDATE ${t.deadLetters} d
SET status = 'replaying', claimed_by = $3, lease_until = $4, updated_at = $1
WHERE d.id = ANY(ARRAY(
  SELECT e.id FROM (
    SELECT id FROM ${t.deadLetters} WHERE status = 'replaying' AND lease_until <= $1 AND group_name = $5
    ORDER BY lease_until, id LIMIT $2 FOR UPDATE SKIP LOCKED) e
  UNION ALL
  SELECT p.id FROM (
    SELECT id FROM ${t.deadLetters} WHERE status = 'pending' AND next_retry_at <= $1 AND group_name = $5
    ORDER BY next_retry_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) p
  LIMIT $2))
RETURNING ${deadLetterColumns('d')}`;

// The transitions below record their event in the same statement; the count is the rows changed.

/** $1 id, $2 owner, $3 now. */
export const markResolved = (t: TableNames) => `WITH d AS (
  UPDATE ${t.deadLetters}
  SET status = 'resolved', next_retry_at = NULL, claimed_by = NULL, lease_until = NULL, updated_at = $3
  WHERE id = $1 AND ${hasStatus('replaying')} AND claimed_by = $2
  RETURNING id, message_id, group_name, attempts)
INSERT INTO ${t.deadLetterEvents} (${EVENT_COLUMNS})
SELECT id, message_id, group_name, $3::bigint, 'resolved', attempts, NULL, $2::text FROM d`;

/** $1 ids (bigint[]), $2 owner, $3 now. */
export const markResolvedMany = (t: TableNames) => `WITH d AS (
  UPDATE ${t.deadLetters}
  SET status = 'resolved', next_retry_at = NULL, claimed_by = NULL, lease_until = NULL, updated_at = $3
  WHERE id = ANY($1::bigint[]) AND ${hasStatus('replaying')} AND claimed_by = $2
  RETURNING id, message_id, group_name, attempts)
INSERT INTO ${t.deadLetterEvents} (${EVENT_COLUMNS})
SELECT id, message_id, group_name, $3::bigint, 'resolved', attempts, NULL, $2::text FROM d`;

/** $1 id, $2 owner, $3 attempts, $4 status, $5 next retry, $6 error, $7 now. */
export const reschedule = (t: TableNames) => `WITH d AS (
  UPDATE ${t.deadLetters}
  SET attempts = $3, status = $4, next_retry_at = $5, last_error = $6, claimed_by = NULL, lease_until = NULL,
    updated_at = $7
  WHERE id = $1 AND ${hasStatus('replaying')} AND claimed_by = $2
  RETURNING id, message_id, group_name, attempts, status, last_error)
INSERT INTO ${t.deadLetterEvents} (${EVENT_COLUMNS})
SELECT id, message_id, group_name, $7::bigint, CASE WHEN status = 'dead' THEN 'dead' ELSE 'replay_failed' END,
  attempts, last_error, $2::text FROM d`;

/**
 * $1 before, $2 limit. Settled rows (resolved, ignored) unchanged since `before`, oldest first on
 * their partial index, deleted with their history in one statement. SKIP LOCKED passes over a row a
 * new failure is reopening; locking re-checks the status on the newest row version, which the lock
 * then keeps, so the outer delete needs only the ids (primary-key lookups).
 */
export const purgeSettled = (t: TableNames) => `WITH d AS (
  DELETE FROM ${t.deadLetters}
  WHERE id = ANY(ARRAY(
    SELECT id FROM ${t.deadLetters} WHERE status IN ('resolved', 'ignored') AND updated_at < $1
    ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED))
  RETURNING id),
e AS (DELETE FROM ${t.deadLetterEvents} WHERE dead_letter_id IN (SELECT id FROM d))
SELECT count(*)::int AS n FROM d`;

export const selectByKey = (t: TableNames) =>
  `SELECT ${DEAD_LETTER_COLUMNS} FROM ${t.deadLetters} WHERE message_id = $1 AND group_name = $2`;

/** With `byGroup`, $1 is the group. */
export const countByStatus = (t: TableNames, byGroup: boolean) =>
  `SELECT status, count(*)::bigint AS n FROM ${t.deadLetters} ${byGroup ? 'WHERE group_name = $1' : ''} GROUP BY status`;

/** The dead-letter statements the shared concern runs: each change writes its history in the same statement. */
export function deadLetterStatements(t: TableNames): DeadLetterStatements {
  return {
    dialect: adminDialect,
    upsertFailure: (f, error) => ({ text: upsertFailure(t), values: failureValues(adminDialect, f, error) }),
    applyDecision: (id, _attempts, d, f, error) => [
      { text: applyDecision(t), values: [id, d.status, d.nextRetryAt, f.now, error] },
    ],
    claim: {
      mode: 'one',
      statement: (r) => ({ text: claimDue(t), values: [r.now, r.limit, r.owner, r.now + r.leaseMs, r.group] }),
    },
    settle: {
      resolve: (id, owner, now) => ({ text: markResolved(t), values: [id, owner, now] }),
      resolveMany: (ids, owner, now) => ({ text: markResolvedMany(t), values: [ids, owner, now] }),
      reschedule: (u) => ({
        text: reschedule(t),
        values: [u.id, u.owner, u.attempts, u.decision.status, u.decision.nextRetryAt, clipError(u.error), u.now],
      }),
    },
    transitionChunk: Infinity,
    selectByKey: (messageId, group) => ({ text: selectByKey(t), values: [messageId, group] }),
    countByStatus: countStatement((byGroup) => countByStatus(t, byGroup)),
    purgeSettled: { mode: 'one', statement: (before, limit) => ({ text: purgeSettled(t), values: [before, limit] }) },
  };
}
