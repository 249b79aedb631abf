import type { TableNames } from '../sql/naming.js';
import type { OutboxStatements } from '../sql/outbox.js';
import { stepwiseFailureSql } from '../sql/outbox-failure.js';
import { insertValues, OUTBOX_COLUMNS } from '../sql/outbox-row.js';

/**
 * SQLite statements of the outbox, one named function each. Placeholders are `?`, in text order.
 *
 * SQLite's planner weighs a list of keys against the table's size as sqlite_stat1 recorded it: after
 * an ANALYZE of a young table (ten rows) it scans the table, however large it grew, rather than look
 * up five keys, whether they come as `IN (?, ...)` or from json_each. So statements that touch rows by
 * key take one key each (`seq = ?`, never planned as a scan) and run once per row inside one
 * transaction, which costs no round trip in-process; range reads name their index with INDEXED BY.
 */

/** Index names, for INDEXED BY. */
export const indexNames = (prefix: string) => ({
  due: `${prefix}outbox_due`,
  sent: `${prefix}outbox_sent`,
  unsentKey: `${prefix}outbox_unsent_key`,
  attempts: `${prefix}outbox_attempts_message`,
});

export const insertOutbox = (
  t: TableNames,
) => `INSERT INTO ${t.outbox} (message_id, type, msg_key, topic, ordering_key, key_seq,
  version, headers, payload, traceparent, tracestate, created_at, next_attempt_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (type, msg_key) DO NOTHING`;

export const selectMessageIdByTypeKey = (t: TableNames) =>
  `SELECT message_id FROM ${t.outbox} WHERE type = ? AND msg_key = ?`;

// SQLite has one writer at a time, so key_seq follows commit order by construction.
export const nextKeySeq = (t: TableNames) => `INSERT INTO ${t.outboxKeys} (ordering_key, last_seq) VALUES (?, 1)
ON CONFLICT (ordering_key) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq`;

const earlierUnsent = (t: TableNames, prefix: string) =>
  `AND NOT EXISTS (SELECT 1 FROM ${t.outbox} e INDEXED BY "${indexNames(prefix).unsentKey}" WHERE e.ordering_key = c.ordering_key AND e.key_seq > 0 AND e.key_seq < c.key_seq AND e.status <> 'sent')`;

/**
 * ? now, ? limit: the seqs a claim takes, in claim order. INDEXED BY pins the partial index whatever
 * ANALYZE recorded (an all-pending table makes `status = 'pending'` look unselective), and makes the
 * statement fail loudly rather than scan if the index is ever missing. Run with {@link claimRow} in
 * one transaction, whose write lock makes the claim atomic.
 */
export const selectClaimable = (t: TableNames, prefix: string, ordered: boolean) => `SELECT c.seq
FROM ${t.outbox} AS c INDEXED BY "${indexNames(prefix).due}"
WHERE c.status = 'pending' AND c.next_attempt_at <= ? ${ordered ? earlierUnsent(t, prefix) : ''}
ORDER BY c.next_attempt_at, c.seq
LIMIT ?`;

/** ? lease-until, ? owner, ? seq. */
export const claimRow = (t: TableNames) => `UPDATE ${t.outbox}
SET next_attempt_at = ?, claimed_by = ?
WHERE seq = ?
RETURNING ${OUTBOX_COLUMNS}`;

/** ? now, ? seq. Rows already sent or dead are left as they are. */
export const markSentRow = (t: TableNames) => `UPDATE ${t.outbox}
SET status = 'sent', sent_at = ?, claimed_by = NULL
WHERE seq = ? AND status = 'pending'`;

/** ? now, ? owner, ? seq: due again at once. */
export const releaseRow = (t: TableNames) => `UPDATE ${t.outbox}
SET next_attempt_at = ?, claimed_by = NULL
WHERE seq = ? AND claimed_by = ? AND status = 'pending'`;

/** ? before, ? limit: seq and message id of sent rows older than `before`, oldest first. */
export const selectSent = (t: TableNames, prefix: string) => `SELECT seq, message_id
FROM ${t.outbox} INDEXED BY "${indexNames(prefix).sent}"
WHERE status = 'sent' AND sent_at < ?
ORDER BY sent_at
LIMIT ?`;

/** ? seq (a list of one: see the note at the top). */
export const deleteSent = (t: TableNames) => `DELETE FROM ${t.outbox} WHERE seq = ?`;

/** ? message id: the attempt history of a row deleteSent removes. */
export const deleteAttempts = (t: TableNames, prefix: string) =>
  `DELETE FROM ${t.outboxAttempts} INDEXED BY "${indexNames(prefix).attempts}" WHERE message_id = ?`;

export const stats = (t: TableNames) =>
  `SELECT status, count(*) AS n, min(created_at) AS oldest FROM ${t.outbox} GROUP BY status`;

export const selectByMessageId = (t: TableNames) => `SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox} WHERE message_id = ?`;

/** ? name, ? owner, ? expires at, ? now. Returns a row only when `owner` holds the lease. */
export const acquireLease = (t: TableNames) => `INSERT INTO ${t.leases} (name, owner, expires_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE owner = excluded.owner OR expires_at < ?
RETURNING owner`;

/**
 * The outbox statements the shared outbox concern runs. Statements by key take one seq each, in one
 * transaction (see the note at the top); the claim selects seqs, then takes each row by its seq.
 */
export function outboxStatements(t: TableNames, prefix: string): OutboxStatements {
  const one = (text: string, ...values: unknown[]) => ({ text, values });
  return {
    insert: (row, keySeq) => one(insertOutbox(t), ...insertValues(row, keySeq), row.createdAt),
    selectMessageId: (type, key) => one(selectMessageIdByTypeKey(t), type, key),
    nextKeySeq: { statement: (key) => one(nextKeySeq(t), key) },
    claim: {
      mode: 'stepwise',
      select: (req) => one(selectClaimable(t, prefix, req.ordered), req.now, req.limit),
      take: {
        chunk: 1,
        returnsRows: true,
        statement: ([seq], req) => one(claimRow(t), req.now + req.leaseMs, req.owner, seq),
      },
    },
    markSent: { chunk: 1, statement: ([seq], now) => one(markSentRow(t), now, seq) },
    release: { chunk: 1, statement: ([seq], owner, now) => one(releaseRow(t), now, seq, owner) },
    recordFailure: { mode: 'stepwise', sql: stepwiseFailureSql(t) },
    purgeSent: {
      mode: 'stepwise',
      sql: {
        selectSent: selectSent(t, prefix),
        deleteRows: () => deleteSent(t),
        deleteAttempts: () => deleteAttempts(t, prefix),
        chunk: 1,
      },
    },
    stats: () => one(stats(t)),
    selectByMessageId: (messageId) => one(selectByMessageId(t), messageId),
    acquireLease: {
      mode: 'returning',
      statement: (name, owner, now, expiresAt) => one(acquireLease(t), name, owner, expiresAt, now),
    },
  };
}
