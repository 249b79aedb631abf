import { OUTBOX_COLUMNS } from '../shared/outbox-row.js';
import type { TableNames } from '../shared/naming.js';

/**
 * SQLite statements of the outbox, one named function each. Placeholders are `?`, in text order.
 * Lists of seqs travel as one JSON array (`json_each`), so each statement has one text and is
 * prepared once.
 */

/** Index names; the claim names `due` with INDEXED BY (see claimOutbox). */
export const indexNames = (prefix: string) => ({ due: `${prefix}outbox_due` });

const seqList = `SELECT value FROM json_each(?)`;

export const insertOutbox = (
  t: TableNames,
) => `INSERT INTO ${t.outbox} (message_id, type, msg_key, topic, ordering_key, key_seq,
  version, headers, payload, traceparent, tracestate, created_at, next_attempt_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (type, msg_key) DO NOTHING`;

/** The row inserted already claimed (lease end, owner last), for the relay in this process. */
export const insertOutboxLeased = (
  t: TableNames,
) => `INSERT INTO ${t.outbox} (message_id, type, msg_key, topic, ordering_key, key_seq,
  version, headers, payload, traceparent, tracestate, created_at, next_attempt_at, claimed_by)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (type, msg_key) DO NOTHING RETURNING seq`;

export const selectMessageIdByTypeKey = (t: TableNames) =>
  `SELECT message_id FROM ${t.outbox} WHERE type = ? AND msg_key = ?`;

// SQLite has one writer at a time, so key_seq follows commit order by construction.
export const nextKeySeq = (t: TableNames) => `INSERT INTO ${t.outboxKeys} (ordering_key, last_seq) VALUES (?, 1)
ON CONFLICT (ordering_key) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq`;

const earlierUnsent = (t: TableNames) =>
  `AND NOT EXISTS (SELECT 1 FROM ${t.outbox} e WHERE e.ordering_key = c.ordering_key AND e.key_seq > 0 AND e.key_seq < c.key_seq AND e.status <> 'sent')`;

/**
 * ? lease-until, ? owner, ? now, ? limit. One statement, so it needs no transaction. INDEXED BY pins
 * the partial index whatever ANALYZE recorded (an all-pending table makes `status = 'pending'` look
 * unselective), and makes the statement fail loudly rather than scan if the index is ever missing.
 */
export const claimOutbox = (t: TableNames, prefix: string, ordered: boolean) => `UPDATE ${t.outbox}
SET next_attempt_at = ?, claimed_by = ?
WHERE seq IN (
  SELECT c.seq FROM ${t.outbox} AS c INDEXED BY "${indexNames(prefix).due}"
  WHERE c.status = 'pending' AND c.next_attempt_at <= ? ${ordered ? earlierUnsent(t) : ''}
  ORDER BY c.next_attempt_at, c.seq
  LIMIT ?)
RETURNING ${OUTBOX_COLUMNS}`;

/** ? now, ? seqs (JSON array). */
export const markSent = (t: TableNames) => `UPDATE ${t.outbox}
SET status = 'sent', sent_at = ?, claimed_by = NULL
WHERE seq IN (${seqList}) AND status = 'pending'`;

/** ? attempts, ? next attempt, ? status, ? error, ? seq, ? owner. */
export const recordFailure = (t: TableNames) => `UPDATE ${t.outbox}
SET attempts = ?, next_attempt_at = ?, status = ?, last_error = ?, claimed_by = NULL
WHERE seq = ? AND claimed_by = ? AND status = 'pending'`;

/** ? attempt, ? at, ? outcome, ? error, ? actor, ? seq. After recordFailure, in its transaction. */
export const insertAttempt = (
  t: TableNames,
) => `INSERT INTO ${t.outboxAttempts} (message_id, attempt, at, outcome, error, actor)
SELECT message_id, ?, ?, ?, ?, ? FROM ${t.outbox} WHERE seq = ?`;

/** ? now, ? owner, ? seqs (JSON array). */
export const releaseClaims = (t: TableNames) => `UPDATE ${t.outbox}
SET next_attempt_at = ?, claimed_by = NULL
WHERE claimed_by = ? AND seq IN (${seqList}) AND status = 'pending'`;

/** ? now, ? owner, ? rows as a JSON array of [seq, message id, lease end] triples. */
export const releaseLeased = (t: TableNames) => `UPDATE ${t.outbox}
SET next_attempt_at = ?, claimed_by = NULL
WHERE claimed_by = ? AND status = 'pending' AND (seq, message_id, next_attempt_at) IN (
  SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?))`;

/** ? rows as a JSON array of [seq, message id] pairs. */
export const countRows = (t: TableNames) => `SELECT count(*) AS n FROM json_each(?) r
JOIN ${t.outbox} o ON o.seq = json_extract(r.value, '$[0]') AND o.message_id = json_extract(r.value, '$[1]')`;

/** ? before, ? limit. (DELETE ... LIMIT needs a compile option, hence the subquery.) */
export const purgeSent = (t: TableNames) => `DELETE FROM ${t.outbox} WHERE seq IN (
  SELECT seq FROM ${t.outbox} WHERE status = 'sent' AND sent_at < ? ORDER BY sent_at LIMIT ?)`;

/** ? before, ? limit. History of purged rows: attempts whose outbox row is gone (retention runs it after purgeSent). */
export const purgeOrphanAttempts = (t: TableNames) => `DELETE FROM ${t.outboxAttempts} WHERE id IN (
  SELECT a.id FROM ${t.outboxAttempts} a WHERE a.at < ?
  AND NOT EXISTS (SELECT 1 FROM ${t.outbox} o WHERE o.message_id = a.message_id) ORDER BY a.id LIMIT ?)`;

export const stats = (t: TableNames) =>
  `SELECT status, count(*) AS n, min(created_at) AS oldest FROM ${t.outbox} GROUP BY status`;

export const selectByMessageId = (t: TableNames) => `SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox} WHERE message_id = ?`;

/** ? name, ? owner, ? expires at, ? now. Returns a row only when `owner` holds the lease. */
export const acquireLease = (t: TableNames) => `INSERT INTO ${t.leases} (name, owner, expires_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE owner = excluded.owner OR expires_at < ?
RETURNING owner`;
