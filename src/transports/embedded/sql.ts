/** Table names of one log, derived from the table prefix. */
export interface LogTables {
  /** The append-only log: one row per published message, `log_offset` is its global position. */
  readonly log: string;
  /** Committed offset per (group, topic). */
  readonly checkpoints: string;
  /** Which subscriber consumes a (group, topic), until when, and how far it has read. */
  readonly leases: string;
}

export function logTables(prefix: string): LogTables {
  return Object.freeze({ log: `${prefix}messages`, checkpoints: `${prefix}checkpoints`, leases: `${prefix}leases` });
}

/**
 * Idempotent schema. AUTOINCREMENT (not a plain rowid) so that an offset is never reused, even
 * after the newest rows are purged: a checkpoint must never point at a future message.
 */
export function createSchema(t: LogTables): string {
  return `
CREATE TABLE IF NOT EXISTS ${t.log} (
  log_offset INTEGER PRIMARY KEY AUTOINCREMENT,
  topic TEXT NOT NULL,
  message_id TEXT NOT NULL,
  headers TEXT NOT NULL,
  body BLOB NOT NULL,
  appended_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ${t.log}_topic_offset ON ${t.log} (topic, log_offset);
CREATE TABLE IF NOT EXISTS ${t.checkpoints} (
  group_name TEXT NOT NULL,
  topic TEXT NOT NULL,
  committed_offset INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (group_name, topic)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${t.leases} (
  group_name TEXT NOT NULL,
  topic TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  read_offset INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (group_name, topic)
) WITHOUT ROWID;`;
}

/**
 * Logs created before `read_offset` get it added (0: nothing read yet). The holder's read position
 * is what tells a probe which uncommitted rows are in flight rather than waiting.
 */
export function addLeaseReadOffset(t: LogTables): string {
  return `ALTER TABLE ${t.leases} ADD COLUMN read_offset INTEGER NOT NULL DEFAULT 0`;
}

/** Params: table name. Rows name the table's columns. */
export function tableColumns(): string {
  return 'SELECT name FROM pragma_table_info(?)';
}

/** Params: topic, message_id, headers, body, appended_at. */
export function appendMessage(t: LogTables): string {
  return `INSERT INTO ${t.log} (topic, message_id, headers, body, appended_at) VALUES (?, ?, ?, ?, ?)`;
}

/** Params: topic, after offset, limit. */
export function readAfter(t: LogTables): string {
  return `SELECT log_offset, message_id, headers, body FROM ${t.log} WHERE topic = ? AND log_offset > ? ORDER BY log_offset LIMIT ?`;
}

/** Params: group, topic. */
export function readCheckpoint(t: LogTables): string {
  return `SELECT committed_offset FROM ${t.checkpoints} WHERE group_name = ? AND topic = ?`;
}

/** Params: group, topic, offset, now. Never moves a checkpoint backwards. */
export function commitCheckpoint(t: LogTables): string {
  return `INSERT INTO ${t.checkpoints} (group_name, topic, committed_offset, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (group_name, topic) DO UPDATE SET committed_offset = excluded.committed_offset, updated_at = excluded.updated_at
WHERE excluded.committed_offset > ${t.checkpoints}.committed_offset`;
}

/** Params: group, topic. */
export function readLease(t: LogTables): string {
  return `SELECT owner, expires_at FROM ${t.leases} WHERE group_name = ? AND topic = ?`;
}

/**
 * Params: group, topic, owner, expires_at, now. Changes one row when `owner` holds the lease
 * afterwards. A new holder starts reading at the checkpoint, so its read position starts at 0.
 */
export function acquireLease(t: LogTables): string {
  return `INSERT INTO ${t.leases} (group_name, topic, owner, expires_at, read_offset) VALUES (?, ?, ?, ?, 0)
ON CONFLICT (group_name, topic) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, read_offset = 0
WHERE ${t.leases}.owner = excluded.owner OR ${t.leases}.expires_at <= ?`;
}

/** Params: expires_at, read_offset, group, topic, owner. Changes nothing when the lease was lost. */
export function renewLease(t: LogTables): string {
  return `UPDATE ${t.leases} SET expires_at = ?, read_offset = ? WHERE group_name = ? AND topic = ? AND owner = ?`;
}

/** Params: group, topic, owner. */
export function releaseLease(t: LogTables): string {
  return `DELETE FROM ${t.leases} WHERE group_name = ? AND topic = ? AND owner = ?`;
}

/**
 * Params: limit. Deletes rows of topics every group with a checkpoint has committed past. Groups
 * without a checkpoint on a topic are not waited for.
 */
export function purgeCommitted(t: LogTables): string {
  return `DELETE FROM ${t.log} WHERE log_offset IN (
  SELECT m.log_offset FROM ${t.log} m
  JOIN (SELECT topic, MIN(committed_offset) AS upto FROM ${t.checkpoints} GROUP BY topic) c ON c.topic = m.topic
  WHERE m.log_offset <= c.upto LIMIT ?)`;
}
