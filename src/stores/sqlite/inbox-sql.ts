import type { TableNames } from '../shared/naming.js';

/** SQLite statements of the inbox, one named function each. Placeholders are `?`, in text order. */

/** ? message id, ? group, ? now. Inserts nothing (0 changes) when the group already recorded the message. */
export const insertInbox = (t: TableNames) => `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at)
VALUES (?, ?, ?)
ON CONFLICT (message_id, group_name) DO NOTHING`;

export const selectRecordedAt = (t: TableNames) =>
  `SELECT recorded_at FROM ${t.inbox} WHERE message_id = ? AND group_name = ?`;

/** ? before, ? limit. (DELETE ... LIMIT needs a compile option, hence the subquery.) */
export const purgeInbox = (t: TableNames) => `DELETE FROM ${t.inbox} WHERE rowid IN (
  SELECT rowid FROM ${t.inbox} WHERE recorded_at < ? ORDER BY recorded_at LIMIT ?)`;
