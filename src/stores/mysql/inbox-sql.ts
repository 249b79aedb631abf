import type { TableNames } from '../sql/naming.js';

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
