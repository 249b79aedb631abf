import type { InboxStatements } from '../sql/inbox.js';
import type { TableNames } from '../sql/naming.js';
import { statementName } from './executor.js';

/** PostgreSQL statements of the inbox, one named function each. */

/** $1 message id, $2 group, $3 now. Inserts nothing (rowCount 0) when the group already recorded the message. */
export const insertInbox = (t: TableNames) => `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at)
VALUES ($1, $2, $3)
ON CONFLICT (message_id, group_name) DO NOTHING`;

/** $1 message ids (text[]), $2 group, $3 now. Returns the ids that were new. */
export const insertInboxBatch = (t: TableNames) => `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at)
SELECT id, $2, $3 FROM unnest($1::text[]) AS ids(id)
ON CONFLICT (message_id, group_name) DO NOTHING
RETURNING message_id`;

export const selectRecordedAt = (t: TableNames) =>
  `SELECT recorded_at FROM ${t.inbox} WHERE message_id = $1 AND group_name = $2`;

/**
 * $1 before, $2 limit. The oldest rows on their index (plan forced with CLAIM_PLAN_SETTINGS), deleted
 * by row address: a TID scan is the one way to reach them, where a join back on the two-column key
 * let stale statistics choose a scan of the whole inbox. Inbox rows are never updated, and a row
 * seen by this statement's snapshot cannot be vacuumed away under it, so each address still holds
 * the row the subquery chose (or one another purge deleted meanwhile, which is skipped).
 */
export const purgeInbox = (t: TableNames) => `DELETE FROM ${t.inbox} WHERE ctid = ANY(ARRAY(
  SELECT ctid FROM ${t.inbox} WHERE recorded_at < $1 ORDER BY recorded_at LIMIT $2))`;

/** The inbox statements the shared inbox concern runs; the consumer's per-message ones are prepared once per connection. */
export function inboxStatements(t: TableNames): InboxStatements {
  const insert = insertInbox(t);
  const many = insertInboxBatch(t);
  return {
    insert: (messageId, group, now) => ({ text: insert, values: [messageId, group, now], name: statementName(insert) }),
    insertMany: {
      mode: 'returning',
      statement: (ids, group, now) => ({ text: many, values: [ids, group, now], name: statementName(many) }),
    },
    selectRecordedAt: (messageId, group) => ({ text: selectRecordedAt(t), values: [messageId, group] }),
    purge: { mode: 'one', statement: (before, limit) => ({ text: purgeInbox(t), values: [before, limit] }) },
  };
}
