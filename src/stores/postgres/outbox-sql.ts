import type { FailureUpdate } from '../../ports/outbox-store.js';
import type { TableNames } from '../sql/naming.js';
import type { OutboxStatements } from '../sql/outbox.js';
import { clipError, insertValues, OUTBOX_COLUMNS } from '../sql/outbox-row.js';
import { statementName } from './executor.js';
import { hasStatus } from './status-filter.js';

/**
 * PostgreSQL statements of the outbox, one named function each.
 *
 * The outbox row is written once and then only in columns no index covers, so its updates are
 * heap-only (HOT). The relay's queue is `outboxPending`, a narrow row per message not yet sent (dead
 * ones stay, flagged, as they hold back later rows of their ordering key), deleted when it is sent.
 * Locks go queue row first, then outbox row, in every statement that takes both.
 */

// The queue row of a new outbox row `m`; the ordering key only where key_seq orders it.
const queueRow = (t: TableNames) => `INSERT INTO ${t.outboxPending} (seq, next_attempt_at, claimed_by,
    ordering_key, key_seq)
  SELECT seq, next_attempt_at, NULL, CASE WHEN key_seq > 0 THEN ordering_key END, key_seq FROM m`;

// Both inserts report a new row by their row count (1, or 0 for a duplicate (type, key)).
const insertRow = (t: TableNames) => `WITH m AS (INSERT INTO ${t.outbox} (message_id, type, msg_key, topic,
    ordering_key, key_seq, version, headers, payload, traceparent, tracestate, created_at, next_attempt_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
  ON CONFLICT (type, msg_key) DO NOTHING RETURNING seq, next_attempt_at, ordering_key, key_seq)`;

// Inserts and, in the same statement, queues a NOTIFY that PostgreSQL delivers only on commit. The
// commit then holds PostgreSQL's cluster-wide notify lock through its WAL flush.
export const insertOutbox = (t: TableNames) => `${insertRow(t)},
q AS (${queueRow(t)} RETURNING 1)
SELECT pg_notify($13, '') FROM q`;

// Inserts only: the NOTIFY follows the commit (notifyCommitted).
export const insertOutboxQuietly = (t: TableNames) => `${insertRow(t)}
${queueRow(t)}`;

export const selectMessageIdByTypeKey = (t: TableNames) =>
  `SELECT message_id FROM ${t.outbox} WHERE type = $1 AND msg_key = $2`;

// The row lock on the key row serialises same-key transactions, so key_seq follows commit order.
export const nextKeySeq = (t: TableNames) => `INSERT INTO ${t.outboxKeys} AS k (ordering_key, last_seq) VALUES ($1, 1)
  ON CONFLICT (ordering_key) DO UPDATE SET last_seq = k.last_seq + 1 RETURNING last_seq`;

/**
 * Settings of a claim's or a purge's transaction (Surety's own, never the caller's). A forced index
 * plan: the planner must not choose a seq scan, or a bitmap scan and a sort, on stale statistics. No
 * wait for the WAL flush: bookkeeping lost in a server crash only means a row is published (or a
 * purge run) again, which at-least-once delivery allows.
 */
export const CLAIM_PLAN_SETTINGS =
  'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL synchronous_commit = off';

// Every row still in the queue is unsent (pending or dead).
const earlierUnsent = (t: TableNames) =>
  `AND NOT EXISTS (SELECT 1 FROM ${t.outboxPending} e WHERE e.ordering_key = c.ordering_key AND e.key_seq > 0 AND e.key_seq < c.key_seq)`;

/** The due queue rows, oldest first, locked; locked rows are skipped, not waited for. */
const dueQueueRows = (t: TableNames, ordered: boolean) => `SELECT c.seq FROM ${t.outboxPending} c
  WHERE NOT c.dead AND c.next_attempt_at <= $1 ${ordered ? earlierUnsent(t) : ''}
  ORDER BY c.next_attempt_at, c.seq
  LIMIT $2
  FOR UPDATE SKIP LOCKED`;

/** OUTBOX_COLUMNS of outbox row `o`, with the schedule and claim of queue row `q`. */
const claimedColumns = OUTBOX_COLUMNS.split(', ')
  .map((c) => (c === 'next_attempt_at' || c === 'claimed_by' ? `q.${c}` : `o.${c}`))
  .join(', ');

/**
 * $1 now, $2 limit, $3 lease-until, $4 owner. The lease is the queue row's `next_attempt_at`: a
 * claimed row moves past `now` in the due index, so the next claim's index range never visits rows
 * in flight, and a crashed relay's rows fall due again when the lease ends. Only the queue row is
 * written; `= ANY(ARRAY(...))` keeps the update on primary-key lookups. */
export const claimOutbox = (t: TableNames, ordered: boolean) => `WITH q AS (UPDATE ${t.outboxPending} p
  SET next_attempt_at = $3, claimed_by = $4
  WHERE p.seq = ANY(ARRAY(${dueQueueRows(t, ordered)}))
  RETURNING p.seq, p.next_attempt_at, p.claimed_by)
SELECT ${claimedColumns} FROM q JOIN ${t.outbox} o ON o.seq = q.seq`;

/**
 * $1 now, $2 limit. The locked claim (see locked-batch.ts): due queue rows as row locks of the open
 * transaction, nothing written; the queue rows are picked and locked before the join, which under
 * ORDER BY ... LIMIT could otherwise sort the whole join. */
export const lockDueOutbox = (t: TableNames, ordered: boolean) => `SELECT ${claimedColumns}
FROM ${t.outboxPending} q JOIN ${t.outbox} o ON o.seq = q.seq
WHERE q.seq = ANY(ARRAY(${dueQueueRows(t, ordered)}))
ORDER BY q.next_attempt_at, q.seq`;

/** Settings of a locked claim's transaction; `lease` ends a transaction left idle that long (a hung relay). */
export const lockedClaimSettings = (leaseMs: number) =>
  `${CLAIM_PLAN_SETTINGS}; SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(leaseMs)}`;

/**
 * $1 seqs, $2 now. Rows already sent or dead are left as they are. The queue rows go; the outbox
 * rows' update is heap-only; the minute's send count grows by the batch (one row per batch).
 */
export const markSent = (t: TableNames) => `WITH q AS (DELETE FROM ${t.outboxPending}
  WHERE seq = ANY($1::bigint[]) AND dead IS NOT DISTINCT FROM false RETURNING seq),
o AS (UPDATE ${t.outbox} SET status = 'sent', sent_at = $2, claimed_by = NULL
  WHERE seq = ANY(ARRAY(SELECT seq FROM q)) RETURNING 1),
c AS (INSERT INTO ${t.outboxSentMinutes} AS m (minute, n)
  SELECT ($2::bigint / 60000) * 60000, count(*) FROM o HAVING count(*) > 0
  ON CONFLICT (minute) DO UPDATE SET n = m.n + EXCLUDED.n)
SELECT count(*)::int AS n FROM o`;

/**
 * $1 seq, $2 owner, $3 attempts, $4 next attempt, $5 status, $6 error, $7 now. Records the attempt in
 * the same statement. `owned`: only while $2 holds the lease. A locked claim holds the row lock
 * instead; settled after its lock was lost, only if the row is as it was claimed (attempts unchanged).
 */
export const recordFailure = (t: TableNames, owned = true) => `WITH q AS (
  SELECT seq FROM ${t.outboxPending}
  WHERE seq = $1 ${owned ? 'AND claimed_by = $2' : ''} AND dead IS NOT DISTINCT FROM false FOR UPDATE),
o AS (
  UPDATE ${t.outbox}
  SET attempts = $3, next_attempt_at = $4, status = $5, last_error = $6, claimed_by = NULL
  WHERE seq = (SELECT seq FROM q) ${owned ? '' : 'AND attempts = $3 - 1'} AND ${hasStatus('pending')}
  RETURNING seq, message_id, attempts, status, last_error),
p AS (
  UPDATE ${t.outboxPending} SET next_attempt_at = $4, claimed_by = NULL, dead = ($5 = 'dead')
  WHERE seq = (SELECT seq FROM o))
INSERT INTO ${t.outboxAttempts} (message_id, attempt, at, outcome, error, actor)
SELECT message_id, attempts, $7::bigint, CASE WHEN status = 'dead' THEN 'dead' ELSE 'failed' END, last_error, $2::text
FROM o`;

/** recordFailure's values for `u`; `now` when the update carries no time of its own. */
export const recordFailureValues = (u: FailureUpdate, now: number) => [
  u.seq,
  u.owner,
  u.attempts,
  u.nextAttemptAt,
  u.dead ? 'dead' : 'pending',
  clipError(u.error),
  u.now ?? now,
];

/**
 * $1 seq, $2 owner (`owned`) or the row's attempts (a locked claim), $3 next attempt, $4 error. An
 * uncharged failure (the connection was lost): the row is rescheduled, its attempts and history untouched.
 */
export const recordInterruption = (t: TableNames, owned = true) => `WITH q AS (
  SELECT seq FROM ${t.outboxPending}
  WHERE seq = $1 ${owned ? 'AND claimed_by = $2' : ''} AND dead IS NOT DISTINCT FROM false FOR UPDATE),
o AS (
  UPDATE ${t.outbox} SET next_attempt_at = $3, last_error = $4, claimed_by = NULL
  WHERE seq = (SELECT seq FROM q) ${owned ? '' : 'AND attempts = $2'} AND ${hasStatus('pending')}
  RETURNING seq)
UPDATE ${t.outboxPending} SET next_attempt_at = $3, claimed_by = NULL WHERE seq = (SELECT seq FROM o)`;

/** recordInterruption's values for `u`. */
export const recordInterruptionValues = (u: FailureUpdate, owned = true) => [
  u.seq,
  owned ? u.owner : u.attempts,
  u.nextAttemptAt,
  clipError(u.error),
];

/** $1 owner, $2 seqs, $3 now: due again at once. */
export const releaseClaims = (t: TableNames) => `UPDATE ${t.outboxPending}
SET next_attempt_at = $3, claimed_by = NULL
WHERE claimed_by = $1 AND seq = ANY($2::bigint[]) AND dead IS NOT DISTINCT FROM false`;

/**
 * $1 before, $2 limit. Sent rows older than `before`, oldest first along the created_at index (a
 * row is sent after it was created; plan forced with CLAIM_PLAN_SETTINGS), deleted with their
 * attempt history in one statement, found by message id. Rows still unsent among the oldest are
 * read and passed over by every purge. SKIP LOCKED passes over a row an operator is resending;
 * locking re-checks the status on the newest row version, which the lock then keeps, so the outer
 * delete needs only the seqs. Send counts of minutes before `before` go too.
 */
export const purgeSent = (t: TableNames) => `WITH o AS (
  DELETE FROM ${t.outbox}
  WHERE seq = ANY(ARRAY(
    SELECT seq FROM ${t.outbox} WHERE created_at < $1 AND status = 'sent' AND sent_at < $1
    ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))
  RETURNING message_id),
a AS (DELETE FROM ${t.outboxAttempts} WHERE message_id = ANY(ARRAY(SELECT message_id FROM o))),
m AS (DELETE FROM ${t.outboxSentMinutes} WHERE minute < $1 - 60000)
SELECT count(*)::int AS n FROM o`;

export const stats = (t: TableNames) => `SELECT status, count(*)::bigint AS n, min(created_at) AS oldest
FROM ${t.outbox} GROUP BY status`;

// The schedule and claim as the relay's queue holds them (a lease claim writes only there).
const currentColumns = OUTBOX_COLUMNS.split(', ')
  .map((c) =>
    c === 'next_attempt_at' || c === 'claimed_by'
      ? `CASE WHEN q.seq IS NULL THEN o.${c} ELSE q.${c} END AS ${c}`
      : `o.${c}`,
  )
  .join(', ');

export const selectByMessageId = (t: TableNames) => `SELECT ${currentColumns}
FROM ${t.outbox} o LEFT JOIN ${t.outboxPending} q ON q.seq = o.seq WHERE o.message_id = $1`;

/** $1 name, $2 owner, $3 expires at, $4 now. Returns a row only when `owner` holds the lease. */
export const acquireLease = (
  t: TableNames,
) => `INSERT INTO ${t.leases} AS l (name, owner, expires_at) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
WHERE l.owner = EXCLUDED.owner OR l.expires_at < $4
RETURNING owner`;

/**
 * The outbox statements the shared outbox concern runs: each operation one statement, the inserts
 * prepared once per connection, claims, marks, releases and purges under the forced plan. `channel`
 * is the NOTIFY channel of an insert that signals at commit.
 */
export function outboxStatements(t: TableNames, channel: string): OutboxStatements {
  const loud = insertOutbox(t);
  const quiet = insertOutboxQuietly(t);
  const one = (text: string, ...values: unknown[]) => ({ text, values });
  return {
    insert: (row, keySeq, notify) => {
      const values = insertValues(row, keySeq);
      if (notify) values.push(channel);
      const text = notify ? loud : quiet;
      // Read for its row count only: the loud one selects pg_notify's void, which some executors cannot read.
      return { text, values, name: statementName(text), countOnly: true };
    },
    selectMessageId: (type, key) => one(selectMessageIdByTypeKey(t), type, key),
    nextKeySeq: { statement: (key) => one(nextKeySeq(t), key) },
    claim: {
      mode: 'one',
      statement: (req) => one(claimOutbox(t, req.ordered), req.now, req.limit, req.now + req.leaseMs, req.owner),
    },
    markSent: { range: true, statement: (seqs, now) => ({ ...one(markSent(t), seqs, now), counts: 'n' }) },
    release: { range: true, statement: (seqs, owner, now) => one(releaseClaims(t), owner, seqs, now) },
    recordFailure: {
      mode: 'one',
      statement: (u, now) =>
        u.charged === false
          ? { text: recordInterruption(t), values: recordInterruptionValues(u) }
          : { text: recordFailure(t), values: recordFailureValues(u, now) },
    },
    purgeSent: { mode: 'one', statement: (before, limit) => ({ ...one(purgeSent(t), before, limit), counts: 'n' }) },
    stats: () => one(stats(t)),
    selectByMessageId: (messageId) => one(selectByMessageId(t), messageId),
    acquireLease: {
      mode: 'returning',
      statement: (name, owner, now, expiresAt) => one(acquireLease(t), name, owner, expiresAt, now),
    },
  };
}
