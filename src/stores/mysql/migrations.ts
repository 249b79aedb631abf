import type { Migration } from '../sql/migration.js';
import * as steps from '../sql/migration-steps.js';
import type { TableNames } from '../sql/naming.js';
import { isDuplicateColumn, isDuplicateKeyName } from './errors.js';

/**
 * Schema versions, applied in order, each once. Never edit a released entry; append a new one.
 * DDL is not transactional in MySQL, so every statement is idempotent on its own (IF NOT EXISTS).
 * Indexes are declared inline because MySQL 8 lacks CREATE INDEX IF NOT EXISTS, and are plain
 * (MySQL has no partial indexes): the claim index leads with status for the same effect.
 * utf8mb4_bin makes (type, key) uniqueness and ordering keys case-sensitive, as in PostgreSQL.
 */
export function mysqlMigrations(t: TableNames, indexPrefix: string): Migration[] {
  const bare = (name: string) => `\`${indexPrefix}${name}\``;
  const changes = steps.schemaChanges({
    indexName: bare,
    duplicateIndex: isDuplicateKeyName,
    duplicateColumn: isDuplicateColumn,
  });
  const tableOptions = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
  return [
    {
      id: 1,
      name: 'outbox',
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.outbox} (
          seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          message_id CHAR(36) NOT NULL,
          type VARCHAR(200) NOT NULL,
          msg_key VARCHAR(200) NOT NULL,
          topic VARCHAR(200) NOT NULL,
          ordering_key VARCHAR(200) NOT NULL,
          key_seq BIGINT NOT NULL DEFAULT 0,
          version INT NOT NULL,
          headers LONGTEXT NOT NULL,
          payload LONGTEXT NOT NULL,
          traceparent VARCHAR(64) NULL,
          tracestate VARCHAR(512) NULL,
          created_at BIGINT NOT NULL,
          status VARCHAR(8) NOT NULL DEFAULT 'pending',
          attempts INT NOT NULL DEFAULT 0,
          next_attempt_at BIGINT NOT NULL,
          claimed_by VARCHAR(64) NULL,
          last_error TEXT NULL,
          sent_at BIGINT NULL,
          UNIQUE KEY ${bare('outbox_message_id')} (message_id),
          UNIQUE KEY ${bare('outbox_type_key')} (type, msg_key),
          KEY ${bare('outbox_due')} (status, next_attempt_at, seq),
          KEY ${bare('outbox_sent')} (status, sent_at),
          KEY ${bare('outbox_unsent_key')} (ordering_key, status, key_seq)
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.outboxKeys} (
          ordering_key VARCHAR(200) NOT NULL PRIMARY KEY,
          last_seq BIGINT NOT NULL
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.leases} (
          name VARCHAR(64) NOT NULL PRIMARY KEY,
          owner VARCHAR(64) NOT NULL,
          expires_at BIGINT NOT NULL
        ) ${tableOptions}`,
      ],
    },
    {
      id: 2,
      name: 'consumer',
      // The claim indexes lead with status, standing in for PostgreSQL's partial indexes.
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.inbox} (
          message_id VARCHAR(200) NOT NULL,
          group_name VARCHAR(200) NOT NULL,
          recorded_at BIGINT NOT NULL,
          PRIMARY KEY (message_id, group_name),
          KEY ${bare('inbox_recorded')} (recorded_at)
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.deadLetters} (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          message_id VARCHAR(200) NOT NULL,
          group_name VARCHAR(200) NOT NULL,
          topic VARCHAR(200) NOT NULL,
          type VARCHAR(200) NOT NULL,
          msg_key VARCHAR(200) NOT NULL,
          version INT NOT NULL,
          headers LONGTEXT NOT NULL,
          body LONGTEXT NOT NULL,
          body_encoding VARCHAR(8) NOT NULL,
          status VARCHAR(10) NOT NULL CHECK (status IN ('pending', 'replaying', 'resolved', 'ignored', 'dead')),
          attempts INT NOT NULL,
          next_retry_at BIGINT NULL,
          last_error TEXT NOT NULL,
          poison BOOLEAN NOT NULL,
          ignored_reason TEXT NULL,
          claimed_by VARCHAR(64) NULL,
          lease_until BIGINT NULL,
          created_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL,
          UNIQUE KEY ${bare('dead_letters_key')} (message_id, group_name),
          KEY ${bare('dead_letters_due')} (status, next_retry_at, id),
          KEY ${bare('dead_letters_lease')} (status, lease_until)
        ) ${tableOptions}`,
      ],
    },
    {
      id: 3,
      name: 'admin',
      // ADD INDEX has no IF NOT EXISTS in MySQL 8: a rerun after a crash finds the index and goes on.
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.outboxAttempts} (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          message_id CHAR(36) NOT NULL,
          attempt INT NOT NULL,
          at BIGINT NOT NULL,
          outcome VARCHAR(8) NOT NULL CHECK (outcome IN ('failed', 'dead', 'resent')),
          error TEXT NULL,
          actor VARCHAR(200) NULL,
          KEY ${bare('outbox_attempts_message')} (message_id, id)
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.deadLetterEvents} (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          dead_letter_id BIGINT NOT NULL,
          message_id VARCHAR(200) NOT NULL,
          group_name VARCHAR(200) NOT NULL,
          at BIGINT NOT NULL,
          kind VARCHAR(20) NOT NULL,
          attempt INT NOT NULL,
          detail LONGTEXT NULL,
          actor VARCHAR(200) NULL,
          KEY ${bare('dead_letter_events_row')} (dead_letter_id, id),
          KEY ${bare('dead_letter_events_message')} (message_id)
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.relays} (
          relay_id VARCHAR(64) NOT NULL PRIMARY KEY,
          host VARCHAR(255) NOT NULL,
          pid INT NOT NULL,
          started_at BIGINT NOT NULL,
          last_claimed_at BIGINT NULL,
          last_seen_at BIGINT NOT NULL
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.audit} (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          at BIGINT NOT NULL,
          actor VARCHAR(200) NOT NULL,
          role VARCHAR(20) NOT NULL,
          action VARCHAR(100) NOT NULL,
          target VARCHAR(300) NOT NULL,
          reason TEXT NULL,
          outcome VARCHAR(10) NOT NULL,
          detail LONGTEXT NULL,
          KEY ${bare('audit_at')} (at),
          KEY ${bare('audit_actor')} (actor, id),
          KEY ${bare('audit_action')} (action, id),
          KEY ${bare('audit_target')} (target, id)
        ) ${tableOptions}`,
        `CREATE TABLE IF NOT EXISTS ${t.adminJobs} (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          kind VARCHAR(20) NOT NULL,
          filter TEXT NOT NULL,
          reason TEXT NULL,
          actor VARCHAR(200) NOT NULL,
          status VARCHAR(10) NOT NULL,
          total BIGINT NOT NULL,
          done BIGINT NOT NULL,
          changed BIGINT NOT NULL,
          cursor_id BIGINT NOT NULL,
          max_id BIGINT NOT NULL,
          rate_per_second DOUBLE NOT NULL,
          owner VARCHAR(200) NULL,
          lease_until BIGINT NULL,
          created_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL,
          error TEXT NULL,
          KEY ${bare('admin_jobs_status')} (status, id)
        ) ${tableOptions}`,
        ...steps.adminListIndexes(t, changes),
      ],
    },
    steps.deadLetterRetention(t, changes),
    steps.resendHistory(t, changes),
    {
      id: 6,
      name: 'version-guards',
      // raised_by holds a token of the raise that set the version: with the FOUND_ROWS flag (mysql2's
      // default) ON DUPLICATE KEY UPDATE counts an untouched row like an inserted one, so the row says.
      up: [
        `CREATE TABLE IF NOT EXISTS ${t.versionGuards} (
          group_name VARCHAR(200) NOT NULL,
          scope VARCHAR(200) NOT NULL,
          msg_key VARCHAR(200) NOT NULL,
          version BIGINT NOT NULL,
          raised_by CHAR(36) NOT NULL,
          PRIMARY KEY (group_name, scope, msg_key)
        ) ${tableOptions}`,
      ],
    },
    steps.relayStopped(t, changes),
  ];
}
