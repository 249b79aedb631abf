import type { Migration, MigrationStep } from './migration.js';
import type { TableNames } from './naming.js';

/** How a dialect adds an index or a column so that a rerun (a migrator that died before recording the step) goes on. */
export interface SchemaChanges {
  /** Index `name` (unqualified, unprefixed) on `columns` of `table`; `where` makes it partial. */
  addIndex(table: string, name: string, columns: string, where?: string): MigrationStep;
  /** Whether the dialect has partial indexes (MySQL has not: its indexes lead with status instead). */
  readonly partialIndexes: boolean;
  /** `column`, a name and its type, added to `table`. */
  addColumn(table: string, column: string): MigrationStep;
}

/**
 * A dialect's {@link SchemaChanges}: `indexName` qualifies an index name; `duplicateIndex` and
 * `duplicateColumn` name the driver error that says the index or column is already there, where the
 * dialect has no IF NOT EXISTS for it (MySQL's ADD INDEX, MySQL's and SQLite's ADD COLUMN).
 */
export function schemaChanges(d: {
  indexName(name: string): string;
  duplicateIndex?(err: unknown): boolean;
  duplicateColumn?(err: unknown): boolean;
}): SchemaChanges {
  const { duplicateIndex, duplicateColumn } = d;
  return {
    // MySQL, the one dialect without CREATE INDEX IF NOT EXISTS, is also the one without partial indexes.
    partialIndexes: !duplicateIndex,
    addIndex: (table, name, columns, where) =>
      duplicateIndex
        ? { sql: `ALTER TABLE ${table} ADD INDEX ${d.indexName(name)} (${columns})`, alreadyApplied: duplicateIndex }
        : `CREATE INDEX IF NOT EXISTS ${d.indexName(name)} ON ${table} (${columns})${where ? ` WHERE ${where}` : ''}`,
    addColumn: (table, column) =>
      duplicateColumn
        ? { sql: `ALTER TABLE ${table} ADD COLUMN ${column}`, alreadyApplied: duplicateColumn }
        : `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column}`,
  };
}

/** The indexes of migration 3 on the tables of migrations 1 and 2, for the admin's lists; the same in every dialect. */
export const adminListIndexes = (t: TableNames, c: SchemaChanges): MigrationStep[] => [
  c.addIndex(t.outbox, 'outbox_created', 'created_at'),
  c.addIndex(t.deadLetters, 'dead_letters_group', 'group_name, id'),
  c.addIndex(t.deadLetters, 'dead_letters_created', 'created_at'),
];

/**
 * Migration 4: the index retention deletes settled dead letters along. Partial, only settled rows
 * enter it, so it stays as small as what retention has left to delete; else leading with status.
 */
export const deadLetterRetention = (t: TableNames, c: SchemaChanges): Migration => ({
  id: 4,
  name: 'dead-letter-retention',
  up: [
    c.partialIndexes
      ? c.addIndex(t.deadLetters, 'dead_letters_settled', 'updated_at', "status IN ('resolved', 'ignored')")
      : c.addIndex(t.deadLetters, 'dead_letters_settled', 'status, updated_at'),
  ],
});

/** Migration 5: a resend keeps the time the broker had confirmed the copy it replaces, for the message's timeline. */
export const resendHistory = (t: TableNames, c: SchemaChanges): Migration => ({
  id: 5,
  name: 'resend-history',
  up: [c.addColumn(t.outboxAttempts, 'confirmed_at BIGINT')],
});

/** Migration 7: a graceful stop marks the heartbeat row instead of deleting it: "stopped" differs from "never ran". */
export const relayStopped = (t: TableNames, c: SchemaChanges): Migration => ({
  id: 7,
  name: 'relay-stopped',
  up: [c.addColumn(t.relays, 'stopped_at BIGINT')],
});
