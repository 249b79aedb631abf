import type { InboxStatements } from '../sql/inbox.js';
import type { TableNames } from '../sql/naming.js';
import { isDuplicateKey } from './errors.js';

/** MySQL/MariaDB statements of the inbox, one named function each. Placeholders are `?`, in text order. */

/** ? message id, ? group, ? now. A plain INSERT: a duplicate fails with ER_DUP_ENTRY, which rolls back only this statement. */
export const insertInbox = (t: TableNames) =>
  `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at) VALUES (?, ?, ?)`;

/** `count` rows of (? message id, ? group, ? now). */
export const insertInboxRows = (t: TableNames, count: number) =>
  `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at) VALUES ${Array(count).fill('(?, ?, ?)').join(', ')}`;

export const selectRecordedAt = (t: TableNames) =>
  `SELECT recorded_at FROM ${t.inbox} WHERE message_id = ? AND group_name = ?`;

/** ? before, ? limit. */
export const purgeInbox = (t: TableNames) =>
  `DELETE FROM ${t.inbox} WHERE recorded_at < ? ORDER BY recorded_at LIMIT ?`;

/**
 * The inbox statements the shared inbox concern runs. A duplicate fails the insert, and InnoDB rolls
 * back just that statement; the purge runs in READ COMMITTED, so it takes no gap locks that would
 * stall consumers' inserts.
 */
export function inboxStatements(t: TableNames): InboxStatements {
  return {
    insert: (messageId, group, now) => ({ text: insertInbox(t), values: [messageId, group, now] }),
    isDuplicate: isDuplicateKey,
    insertMany: {
      mode: 'allOrNone',
      statement: (ids, group, now) => ({
        text: insertInboxRows(t, ids.length),
        values: ids.flatMap((id) => [id, group, now]),
      }),
    },
    selectRecordedAt: (messageId, group) => ({ text: selectRecordedAt(t), values: [messageId, group] }),
    purge: { mode: 'one', statement: (before, limit) => ({ text: purgeInbox(t), values: [before, limit] }) },
  };
}
