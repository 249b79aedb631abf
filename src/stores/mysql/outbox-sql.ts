import type { TableNames } from '../sql/naming.js';
import type { OutboxStatements } from '../sql/outbox.js';
import { stepwiseFailureSql } from '../sql/outbox-failure.js';
import { insertValues, OUTBOX_COLUMNS } from '../sql/outbox-row.js';
import { isDuplicateKey } from './errors.js';

/** MySQL/MariaDB statements of the outbox, one named function each. Placeholders are `?`, in text order. */

/** Index names; the claim and the purge force them so stale statistics can never turn them into table scans. */
export const indexNames = (prefix: string) => ({
  due: `${prefix}outbox_due`,
  sent: `${prefix}outbox_sent`,
  unsentKey: `${prefix}outbox_unsent_key`,
});

const list = (n: number) => Array.from({ length: n }, () => '?').join(', ');
const qualified = (alias: string) =>
  OUTBOX_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** A plain INSERT: a duplicate (type, key) fails with ER_DUP_ENTRY, which rolls back only this statement. */
export const insertOutbox = (
  t: TableNames,
) => `INSERT INTO ${t.outbox} (message_id, type, msg_key, topic, ordering_key, key_seq,
  version, headers, payload, traceparent, tracestate, created_at, next_attempt_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

// A locking read: it sees the latest commit, where a plain read would use the caller's snapshot, which
// at REPEATABLE READ may predate the row whose duplicate key the insert just hit.
export const selectMessageIdByTypeKey = (t: TableNames) =>
  `SELECT message_id FROM ${t.outbox} WHERE type = ? AND msg_key = ? LOCK IN SHARE MODE`;

// The row lock taken by the upsert serialises same-key transactions, so key_seq follows commit order.
export const bumpKeySeq = (t: TableNames) => `INSERT INTO ${t.outboxKeys} (ordering_key, last_seq) VALUES (?, 1)
ON DUPLICATE KEY UPDATE last_seq = last_seq + 1`;

// Reads the transaction's own write (InnoDB shows a transaction its changes even in a snapshot).
export const selectKeySeq = (t: TableNames) => `SELECT last_seq FROM ${t.outboxKeys} WHERE ordering_key = ?`;

/**
 * The smallest key_seq among c's ordering key's rows of `status`, or NULL. The index orders a key's
 * rows by status, then key_seq, so this reads one entry; a NOT EXISTS with `key_seq < c.key_seq`
 * could only look the key up (MySQL takes no range on a correlated bound) and read every row of
 * it, sent ones included.
 */
const firstOfKey = (t: TableNames, prefix: string, status: 'pending' | 'dead') => `(
      SELECT e.key_seq FROM ${t.outbox} e FORCE INDEX (\`${indexNames(prefix).unsentKey}\`)
      WHERE e.ordering_key = c.ordering_key AND e.status = '${status}' AND e.key_seq > 0
      ORDER BY e.key_seq LIMIT 1)`;

/** c is unordered, or no earlier row of its key is unsent (pending or dead). */
const headOfKey = (t: TableNames, prefix: string) => `(c.key_seq = 0 OR (
    c.key_seq <= COALESCE(${firstOfKey(t, prefix, 'pending')}, c.key_seq)
    AND c.key_seq <= COALESCE(${firstOfKey(t, prefix, 'dead')}, c.key_seq)))`;

/** ? now, ? limit. Run in a READ COMMITTED transaction so the locking read takes no gap locks. */
export const selectClaimable = (t: TableNames, prefix: string, ordered: boolean) => `SELECT ${qualified('c')}
FROM ${t.outbox} c FORCE INDEX (\`${indexNames(prefix).due}\`)
WHERE c.status = 'pending' AND c.next_attempt_at <= ? ${ordered ? `AND ${headOfKey(t, prefix)}` : ''}
ORDER BY c.next_attempt_at, c.seq
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/**
 * `count` seqs: those of the just-locked rows that an earlier unsent row of their key holds back.
 * The claim's key check is a plain read of a snapshot taken as it starts, while its locking read sees
 * rows committed later; two rows of a key committed in between are both locked, the second unchecked.
 * This statement's snapshot postdates every commit the locking read saw, and a key's rows commit in
 * key_seq order (the key row's lock), so it sees every earlier row of a row the claim locked.
 */
export const heldBack = (t: TableNames, prefix: string, count: number) => `SELECT c.seq
FROM ${t.outbox} c
WHERE c.seq IN (${list(count)}) AND NOT ${headOfKey(t, prefix)}`;

/** ? lease-until, ? owner, then `count` seqs. */
export const claimRows = (t: TableNames, count: number) =>
  `UPDATE ${t.outbox} SET next_attempt_at = ?, claimed_by = ? WHERE seq IN (${list(count)})`;

/** ? now, then `count` seqs. */
export const markSent = (t: TableNames, count: number) => `UPDATE ${t.outbox}
SET status = 'sent', sent_at = ?, claimed_by = NULL
WHERE seq IN (${list(count)}) AND status = 'pending'`;

/** ? now, ? owner, then `count` seqs. */
export const releaseClaims = (t: TableNames, count: number) => `UPDATE ${t.outbox}
SET next_attempt_at = ?, claimed_by = NULL
WHERE claimed_by = ? AND seq IN (${list(count)}) AND status = 'pending'`;

/**
 * ? before, ? limit. Sent rows older than `before`, oldest first along their index, locked, passing
 * over rows an operator is resending. Run in READ COMMITTED (no gap locks). A `DELETE ... ORDER BY
 * sent_at LIMIT` read every row in the range to sort them.
 */
export const selectSent = (t: TableNames, prefix: string) => `SELECT seq, message_id
FROM ${t.outbox} FORCE INDEX (\`${indexNames(prefix).sent}\`)
WHERE status = 'sent' AND sent_at < ?
ORDER BY sent_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** `count` seqs, locked by selectSent. */
export const deleteSent = (t: TableNames, count: number) => `DELETE FROM ${t.outbox} WHERE seq IN (${list(count)})`;

/** `count` message ids: the attempt history of rows deleteSent removes. */
export const deleteAttempts = (t: TableNames, count: number) =>
  `DELETE FROM ${t.outboxAttempts} WHERE message_id IN (${list(count)})`;

export const stats = (t: TableNames) =>
  `SELECT status, COUNT(*) AS n, MIN(created_at) AS oldest FROM ${t.outbox} GROUP BY status`;

export const selectByMessageId = (t: TableNames) => `SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox} WHERE message_id = ?`;

/**
 * ? name, ? owner, ? expires at, then the guard `owner = ? OR expires_at < ?` twice with the new value
 * between. MySQL assigns left to right with updated values: once owner is set, the second guard
 * sees the new owner, and `expires_at < ?` still reads the old expiry, so both guards agree (and
 * also agree under MariaDB's SIMULTANEOUS_ASSIGNMENT mode). No VALUES(): deprecated in MySQL 8.
 */
export const upsertLease = (t: TableNames) => `INSERT INTO ${t.leases} (name, owner, expires_at) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE
  owner = IF(owner = ? OR expires_at < ?, ?, owner),
  expires_at = IF(owner = ? OR expires_at < ?, ?, expires_at)`;

// affectedRows cannot tell "taken" from "refused" under FOUND_ROWS, so the holder is read back.
export const selectLeaseOwner = (t: TableNames) => `SELECT owner FROM ${t.leases} WHERE name = ?`;

/**
 * The outbox statements the shared outbox concern runs. A duplicate insert fails (ER_DUP_ENTRY);
 * the key_seq bump is read back (no RETURNING); the claim selects due rows, re-checks ordered ones
 * (see heldBack) and writes the lease in one update; failures, purges and leases go stepwise.
 */
export function outboxStatements(t: TableNames, prefix: string): OutboxStatements {
  const one = (text: string, ...values: unknown[]) => ({ text, values });
  return {
    insert: (row, keySeq) => one(insertOutbox(t), ...insertValues(row, keySeq), row.createdAt),
    isDuplicate: isDuplicateKey,
    selectMessageId: (type, key) => one(selectMessageIdByTypeKey(t), type, key),
    nextKeySeq: { statement: (key) => one(bumpKeySeq(t), key), readBack: (key) => one(selectKeySeq(t), key) },
    claim: {
      mode: 'stepwise',
      select: (req) => one(selectClaimable(t, prefix, req.ordered), req.now, req.limit),
      heldBack: (seqs) => one(heldBack(t, prefix, seqs.length), ...seqs),
      take: {
        returnsRows: false,
        statement: (seqs, req) => one(claimRows(t, seqs.length), req.now + req.leaseMs, req.owner, ...seqs),
      },
    },
    markSent: { statement: (seqs, now) => one(markSent(t, seqs.length), now, ...seqs) },
    release: { statement: (seqs, owner, now) => one(releaseClaims(t, seqs.length), now, owner, ...seqs) },
    recordFailure: { mode: 'stepwise', sql: stepwiseFailureSql(t) },
    // In one READ COMMITTED transaction (no gap locks to stall the relay).
    purgeSent: {
      mode: 'stepwise',
      sql: {
        selectSent: selectSent(t, prefix),
        deleteRows: (n) => deleteSent(t, n),
        deleteAttempts: (n) => deleteAttempts(t, n),
        chunk: 500,
      },
    },
    stats: () => one(stats(t)),
    selectByMessageId: (messageId) => one(selectByMessageId(t), messageId),
    acquireLease: {
      mode: 'readBack',
      upsert: (name, owner, now, expiresAt) =>
        one(upsertLease(t), name, owner, expiresAt, owner, now, owner, owner, now, expiresAt),
      selectOwner: (name) => one(selectLeaseOwner(t), name),
    },
  };
}
