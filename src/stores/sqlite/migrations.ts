import type { Migration } from '../sql/migration.js';
import * as steps from '../sql/migration-steps.js';
import type { TableNames } from '../sql/naming.js';

/**
 * Schema versions, applied in order, each once. Never edit a released entry; append a new one.
 * BIGINT columns get INTEGER affinity (64-bit). AUTOINCREMENT keeps seq from ever being reused after
 * a purge deleted the highest rows, so seq order stays insertion order.
 */
export function sqliteMigrations(t: TableNames, indexPrefix: string): Migration[] {
  // Index names are database-wide in SQLite, so they carry the prefix.
  const bare = (name: string) => `"${indexPrefix}${name}"`;
  const changes = steps.schemaChanges({ indexName: bare, duplicateColumn: isDuplicateColumn });
  return [
    {
      id: 1,
      name: 'outbox',
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.outbox} (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          message_id TEXT NOT NULL,
          type TEXT NOT NULL,
          msg_key TEXT NOT NULL,
          topic TEXT NOT NULL,
          ordering_key TEXT NOT NULL,
          key_seq BIGINT NOT NULL DEFAULT 0,
          version INTEGER NOT NULL,
          headers TEXT NOT NULL,
          payload TEXT NOT NULL,
          traceparent TEXT,
          tracestate TEXT,
          created_at BIGINT NOT NULL,
          status TEXT NOT NULL DEFAULT 'pending',
          attempts INTEGER NOT NULL DEFAULT 0,
          next_attempt_at BIGINT NOT NULL,
          claimed_by TEXT,
          last_error TEXT,
          sent_at BIGINT,
          CONSTRAINT ${bare('outbox_message_id')} UNIQUE (message_id),
          CONSTRAINT ${bare('outbox_type_key')} UNIQUE (type, msg_key)
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('outbox_due')} ON ${t.outbox} (next_attempt_at, seq) WHERE status = 'pending'`,
        `CREATE INDEX IF NOT EXISTS ${bare('outbox_sent')} ON ${t.outbox} (sent_at) WHERE status = 'sent'`,
        `CREATE INDEX IF NOT EXISTS ${bare('outbox_unsent_key')} ON ${t.outbox} (ordering_key, key_seq) WHERE status <> 'sent' AND key_seq > 0`,
        `CREATE TABLE IF NOT EXISTS ${t.outboxKeys} (ordering_key TEXT PRIMARY KEY, last_seq BIGINT NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS ${t.leases} (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at BIGINT NOT NULL)`,
      ],
    },
    {
      id: 2,
      name: 'consumer',
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.inbox} (
          message_id TEXT NOT NULL,
          group_name TEXT NOT NULL,
          recorded_at BIGINT NOT NULL,
          PRIMARY KEY (message_id, group_name)
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('inbox_recorded')} ON ${t.inbox} (recorded_at)`,
        `CREATE TABLE IF NOT EXISTS ${t.deadLetters} (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          message_id TEXT NOT NULL,
          group_name TEXT NOT NULL,
          topic TEXT NOT NULL,
          type TEXT NOT NULL,
          msg_key TEXT NOT NULL,
          version INTEGER NOT NULL,
          headers TEXT NOT NULL,
          body TEXT NOT NULL,
          body_encoding TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('pending', 'replaying', 'resolved', 'ignored', 'dead')),
          attempts INTEGER NOT NULL,
          next_retry_at BIGINT,
          last_error TEXT NOT NULL,
          poison INTEGER NOT NULL,
          ignored_reason TEXT,
          claimed_by TEXT,
          lease_until BIGINT,
          created_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL,
          CONSTRAINT ${bare('dead_letters_key')} UNIQUE (message_id, group_name)
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('dead_letters_due')} ON ${t.deadLetters} (next_retry_at, id) WHERE status = 'pending'`,
        `CREATE INDEX IF NOT EXISTS ${bare('dead_letters_lease')} ON ${t.deadLetters} (lease_until, id) WHERE status = 'replaying'`,
      ],
    },
    {
      id: 3,
      name: 'admin',
      // Audit and job ids are never reused (AUTOINCREMENT): clients keep them in links and cursors.
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.outboxAttempts} (
          id INTEGER PRIMARY KEY,
          message_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          at BIGINT NOT NULL,
          outcome TEXT NOT NULL CHECK (outcome IN ('failed', 'dead', 'resent')),
          error TEXT,
          actor TEXT
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('outbox_attempts_message')} ON ${t.outboxAttempts} (message_id, id)`,
        `CREATE TABLE IF NOT EXISTS ${t.deadLetterEvents} (
          id INTEGER PRIMARY KEY,
          dead_letter_id BIGINT NOT NULL,
          message_id TEXT NOT NULL,
          group_name TEXT NOT NULL,
          at BIGINT NOT NULL,
          kind TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          detail TEXT,
          actor TEXT
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('dead_letter_events_row')} ON ${t.deadLetterEvents} (dead_letter_id, id)`,
        `CREATE INDEX IF NOT EXISTS ${bare('dead_letter_events_message')} ON ${t.deadLetterEvents} (message_id)`,
        `CREATE TABLE IF NOT EXISTS ${t.relays} (
          relay_id TEXT PRIMARY KEY,
          host TEXT NOT NULL,
          pid INTEGER NOT NULL,
          started_at BIGINT NOT NULL,
          last_claimed_at BIGINT,
          last_seen_at BIGINT NOT NULL
        )`,
        `CREATE TABLE IF NOT EXISTS ${t.audit} (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          at BIGINT NOT NULL,
          actor TEXT NOT NULL,
          role TEXT NOT NULL,
          action TEXT NOT NULL,
          target TEXT NOT NULL,
          reason TEXT,
          outcome TEXT NOT NULL,
          detail TEXT
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('audit_at')} ON ${t.audit} (at)`,
        `CREATE INDEX IF NOT EXISTS ${bare('audit_actor')} ON ${t.audit} (actor, id)`,
        `CREATE INDEX IF NOT EXISTS ${bare('audit_action')} ON ${t.audit} (action, id)`,
        `CREATE INDEX IF NOT EXISTS ${bare('audit_target')} ON ${t.audit} (target, id)`,
        `CREATE TABLE IF NOT EXISTS ${t.adminJobs} (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          kind TEXT NOT NULL,
          filter TEXT NOT NULL,
          reason TEXT,
          actor TEXT NOT NULL,
          status TEXT NOT NULL,
          total BIGINT NOT NULL,
          done BIGINT NOT NULL,
          changed BIGINT NOT NULL,
          cursor_id BIGINT NOT NULL,
          max_id BIGINT NOT NULL,
          rate_per_second REAL NOT NULL,
          owner TEXT,
          lease_until BIGINT,
          created_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL,
          error TEXT
        )`,
        `CREATE INDEX IF NOT EXISTS ${bare('admin_jobs_status')} ON ${t.adminJobs} (status, id)`,
        ...steps.adminListIndexes(t, changes),
      ],
    },
    steps.deadLetterRetention(t, changes),
    steps.resendHistory(t, changes),
    {
      id: 6,
      name: 'version-guards',
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.versionGuards} (
          group_name TEXT NOT NULL,
          scope TEXT NOT NULL,
          msg_key TEXT NOT NULL,
          version BIGINT NOT NULL,
          PRIMARY KEY (group_name, scope, msg_key)
        ) WITHOUT ROWID`,
      ],
    },
    steps.relayStopped(t, changes),
  ];
}

/**
 * SQLite has no ADD COLUMN IF NOT EXISTS: a rerun (a migrator that died before recording the step) meets the column.
 * SQLite reports it only as text, in English whatever the locale, so the text is the signal.
 */
function isDuplicateColumn(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'SQLITE_ERROR' && /duplicate column name/.test(String(err));
}
