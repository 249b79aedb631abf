import type { RelayHeartbeat } from '../../ports/admin-store.js';
import type { TableNames } from '../sql/naming.js';
import { Binder, type SqlDialect, type Statement } from '../sql/sql-dialect.js';

/** PostgreSQL's admin statements that differ from the shared ones (shared/admin-sql.ts), and its descriptor. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const adminDialect: SqlDialect = Object.freeze({
  name: 'postgres',
  placeholder: (n: number) => `$${n}`,
  containsIgnoreCase: (column: string, placeholder: string) => `${column} ILIKE ${placeholder} ESCAPE '!'`,
  bool: (value: boolean) => value,
  forUpdate: 'FOR UPDATE',
  forUpdateSkipLocked: 'FOR UPDATE SKIP LOCKED',
  lastInsertId: 'SELECT lastval() AS id',
  // The outbox keeps message ids as UUID: anything else cannot be there, and would fail the cast.
  isOutboxMessageId: (id: string) => UUID.test(id),
});

export function upsertHeartbeat(t: TableNames, h: RelayHeartbeat): Statement {
  return {
    text: `INSERT INTO ${t.relays} (relay_id, host, pid, started_at, last_claimed_at, last_seen_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (relay_id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, started_at = EXCLUDED.started_at,
  last_claimed_at = EXCLUDED.last_claimed_at, last_seen_at = EXCLUDED.last_seen_at, stopped_at = NULL`,
    values: [h.relayId, h.host, h.pid, h.startedAt, h.lastClaimedAt, h.lastSeenAt],
  };
}

/** The counts markSent keeps per minute (no index of sent rows: it would make every mark a full row update). */
export const sentPerMinute = (t: TableNames, since: number): Statement => ({
  text: `SELECT minute, n FROM ${t.outboxSentMinutes} WHERE minute >= $1`,
  values: [since],
});

export const consumedPerMinute = (t: TableNames, since: number): Statement => ({
  text: `SELECT (recorded_at / 60000) * 60000 AS minute, count(*) AS n FROM ${t.inbox} WHERE recorded_at >= $1 GROUP BY 1`,
  values: [since],
});

export const deadLetterGroups = (t: TableNames, limit: number): Statement => ({
  text: `SELECT type, group_name, left(split_part(last_error, chr(10), 1), 300) AS error, count(*) AS n,
  min(created_at) AS oldest
FROM ${t.deadLetters} WHERE status IN ('pending', 'replaying', 'dead')
GROUP BY 1, 2, 3 ORDER BY n DESC, oldest, 1, 2 LIMIT $1`,
  values: [limit],
});

/**
 * Due at once: the row back in the relay's queue (or its queue row reset), due now, unclaimed;
 * `locked_until` is cleared for rows leased before leases moved to `next_attempt_at`. The row count
 * is the queue's: one per row.
 */
export function resendOutbox(t: TableNames, seqs: readonly number[], now: number): Statement {
  const b = new Binder(adminDialect);
  const at = b.bind(now);
  return b.statement(`WITH o AS (UPDATE ${t.outbox} SET status = 'pending', attempts = 0, next_attempt_at = ${at},
  claimed_by = NULL, locked_until = NULL, sent_at = NULL
WHERE seq IN (${b.list(seqs)}) RETURNING seq, ordering_key, key_seq)
INSERT INTO ${t.outboxPending} AS q (seq, next_attempt_at, ordering_key, key_seq)
SELECT seq, ${at}::bigint, CASE WHEN key_seq > 0 THEN ordering_key END, key_seq FROM o
ON CONFLICT (seq) DO UPDATE SET next_attempt_at = EXCLUDED.next_attempt_at, claimed_by = NULL, dead = false`);
}

/** Locks the queue rows of the given outbox rows, before the rows themselves: the relay's lock order. */
export function lockOutboxQueue(t: TableNames, by: { seqs: readonly number[] } | { messageId: string }): Statement {
  const b = new Binder(adminDialect);
  const rows =
    'seqs' in by
      ? `seq IN (${b.list(by.seqs)})`
      : `seq IN (SELECT seq FROM ${t.outbox} WHERE message_id = ${b.bind(by.messageId)})`;
  return b.statement(`SELECT seq FROM ${t.outboxPending} WHERE ${rows} ORDER BY seq FOR UPDATE`);
}
