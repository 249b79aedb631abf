import type { InboxStatements } from '../sql/inbox.js';
import type { TableNames } from '../sql/naming.js';

/** SQLite statements of the inbox, one named function each. Placeholders are `?`, in text order. */

/** ? message id, ? group, ? now. Inserts nothing (0 changes) when the group already recorded the message. */
export const insertInbox = (t: TableNames) => `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at)
VALUES (?, ?, ?)
ON CONFLICT (message_id, group_name) DO NOTHING`;

export const selectRecordedAt = (t: TableNames) =>
  `SELECT recorded_at FROM ${t.inbox} WHERE message_id = ? AND group_name = ?`;

/** The recorded-at index, named with INDEXED BY. */
const recordedIndexName = (prefix: string) => `${prefix}inbox_recorded`;

/** ? before, ? limit: rowids of the oldest rows. */
export const selectExpired = (t: TableNames, prefix: string) => `SELECT rowid AS id
FROM ${t.inbox} INDEXED BY "${recordedIndexName(prefix)}"
WHERE recorded_at < ?
ORDER BY recorded_at
LIMIT ?`;

/** ? rowid from selectExpired; one key each (see outbox-sql.ts). */
export const deleteRow = (t: TableNames) => `DELETE FROM ${t.inbox} WHERE rowid = ?`;

/**
 * The inbox statements the shared inbox concern runs. In-process, one statement per id costs no
 * round trip, so there is no batch insert; the purge selects rowids, then deletes each in one transaction.
 */
export function inboxStatements(t: TableNames, prefix: string): InboxStatements {
  return {
    insert: (messageId, group, now) => ({ text: insertInbox(t), values: [messageId, group, now] }),
    selectRecordedAt: (messageId, group) => ({ text: selectRecordedAt(t), values: [messageId, group] }),
    purge: {
      mode: 'stepwise',
      select: (before, limit) => ({ text: selectExpired(t, prefix), values: [before, limit] }),
      deleteRow: (id) => ({ text: deleteRow(t), values: [id] }),
    },
  };
}
