import type { RelayHeartbeat } from '../../ports/admin-store.js';
import { resendOutbox as sharedResendOutbox } from '../sql/admin-sql.js';
import type { TableNames } from '../sql/naming.js';
import type { SqlDialect, Statement } from '../sql/sql-dialect.js';

/** MySQL/MariaDB admin statements that differ from the shared ones (sql/admin-sql.ts), and the descriptor. */

export const adminDialect: SqlDialect = Object.freeze({
  name: 'mysql',
  placeholder: () => '?',
  // The tables are utf8mb4_bin (case-sensitive): compare lower-cased text.
  containsIgnoreCase: (column: string, placeholder: string) => `LOWER(${column}) LIKE ${placeholder} ESCAPE '!'`,
  bool: (value: boolean) => value,
  forUpdate: 'FOR UPDATE',
  forUpdateSkipLocked: 'FOR UPDATE SKIP LOCKED',
  lastInsertId: 'SELECT LAST_INSERT_ID() AS id',
  isOutboxMessageId: () => true,
});

/** No VALUES(): deprecated in MySQL 8, and MariaDB lacks the row alias that replaces it. */
export function upsertHeartbeat(t: TableNames, h: RelayHeartbeat): Statement {
  const changing = [h.host, h.pid, h.startedAt, h.lastClaimedAt, h.lastSeenAt];
  return {
    text: `INSERT INTO ${t.relays} (relay_id, host, pid, started_at, last_claimed_at, last_seen_at)
VALUES (?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE host = ?, pid = ?, started_at = ?, last_claimed_at = ?, last_seen_at = ?, stopped_at = NULL`,
    values: [h.relayId, ...changing, ...changing],
  };
}

/** Walks the (status, sent_at) index. */
export const sentPerMinute = (t: TableNames, since: number): Statement => ({
  text: `SELECT (sent_at DIV 60000) * 60000 AS minute, COUNT(*) AS n FROM ${t.outbox}
WHERE status = 'sent' AND sent_at >= ? GROUP BY minute`,
  values: [since],
});

export const consumedPerMinute = (t: TableNames, since: number): Statement => ({
  text: `SELECT (recorded_at DIV 60000) * 60000 AS minute, COUNT(*) AS n FROM ${t.inbox}
WHERE recorded_at >= ? GROUP BY minute`,
  values: [since],
});

export const deadLetterGroups = (t: TableNames, limit: number): Statement => ({
  text: `SELECT type, group_name, LEFT(SUBSTRING_INDEX(last_error, CHAR(10), 1), 300) AS error, COUNT(*) AS n,
  MIN(created_at) AS oldest
FROM ${t.deadLetters} WHERE status IN ('pending', 'replaying', 'dead')
GROUP BY type, group_name, error ORDER BY n DESC, oldest, type, group_name LIMIT ?`,
  values: [limit],
});

/** The shared statement (sql/admin-sql.ts): the relay reads the outbox table itself. */
export const resendOutbox = (t: TableNames, seqs: readonly number[], now: number): Statement =>
  sharedResendOutbox(adminDialect, t, seqs, now);
