import type { RelayHeartbeat } from '../../ports/admin-store.js';
import { resendOutbox as sharedResendOutbox } from '../sql/admin-sql.js';
import type { TableNames } from '../sql/naming.js';
import type { SqlDialect, Statement } from '../sql/sql-dialect.js';
import { UNICODE_LOWER } from './unicode-lower.js';

/** SQLite's admin statements that differ from the shared ones (sql/admin-sql.ts), and its descriptor. */

export const adminDialect: SqlDialect = Object.freeze({
  name: 'sqlite',
  placeholder: () => '?',
  // The store registers a lower() that folds all of Unicode, as the pattern's lower-casing does.
  containsIgnoreCase: (column: string, placeholder: string) =>
    `${UNICODE_LOWER}(${column}) LIKE ${placeholder} ESCAPE '!'`,
  bool: (value: boolean) => (value ? 1 : 0),
  // Store transactions are BEGIN IMMEDIATE: one writer, so no row locks are needed (or exist).
  forUpdate: '',
  forUpdateSkipLocked: '',
  lastInsertId: 'SELECT last_insert_rowid() AS id',
  isOutboxMessageId: () => true,
});

export const upsertHeartbeat = (t: TableNames, h: RelayHeartbeat): Statement => ({
  text: `INSERT INTO ${t.relays} (relay_id, host, pid, started_at, last_claimed_at, last_seen_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (relay_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, started_at = excluded.started_at,
  last_claimed_at = excluded.last_claimed_at, last_seen_at = excluded.last_seen_at, stopped_at = NULL`,
  values: [h.relayId, h.host, h.pid, h.startedAt, h.lastClaimedAt, h.lastSeenAt],
});

/** Integer division: both operands are integers. Walks the partial index of sent rows. */
export const sentPerMinute = (t: TableNames, since: number): Statement => ({
  text: `SELECT (sent_at / 60000) * 60000 AS minute, count(*) AS n FROM ${t.outbox}
WHERE status = 'sent' AND sent_at >= ? GROUP BY 1`,
  values: [since],
});

export const consumedPerMinute = (t: TableNames, since: number): Statement => ({
  text: `SELECT (recorded_at / 60000) * 60000 AS minute, count(*) AS n FROM ${t.inbox} WHERE recorded_at >= ? GROUP BY 1`,
  values: [since],
});

const firstLine = `CASE WHEN instr(last_error, char(10)) > 0
  THEN substr(last_error, 1, instr(last_error, char(10)) - 1) ELSE last_error END`;

export const deadLetterGroups = (t: TableNames, limit: number): Statement => ({
  text: `SELECT type, group_name, substr(${firstLine}, 1, 300) AS error, count(*) AS n, min(created_at) AS oldest
FROM ${t.deadLetters} WHERE status IN ('pending', 'replaying', 'dead')
GROUP BY 1, 2, 3 ORDER BY n DESC, oldest, 1, 2 LIMIT ?`,
  values: [limit],
});

/** The shared statement (sql/admin-sql.ts): the relay reads the outbox table itself. */
export const resendOutbox = (t: TableNames, seqs: readonly number[], now: number): Statement =>
  sharedResendOutbox(adminDialect, t, seqs, now);
