import type { OutboxStore } from '../../ports/outbox-store.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';
import { createAdminStore } from './admin.js';
import type { DialectAdminSql } from './admin-context.js';
import { createDeadLetterStore, type DeadLetterStatements } from './dead-letters.js';
import { createHeartbeatStore } from './heartbeats.js';
import { createInboxStore, type InboxStatements } from './inbox.js';
import type { TableNames } from './naming.js';
import { createOutboxStore, type OutboxStatements } from './outbox.js';
import type { OwnConnection } from './own-connection.js';
import { createVersionGuardStore, type VersionGuardStatements } from './version-guards.js';

/** What a dialect gives: its connection and statements, its caller-facing transaction, migrations and close. */
export interface DialectParts<X extends object> extends Pick<Store, 'migrate' | 'close'> {
  readonly tables: TableNames;
  /** The store's own connection, as the shared concerns use it. */
  readonly connection: OwnConnection;
  /** Admin statements vary with their filters: where preparing each costs (PostgreSQL), how to run them unprepared. */
  readonly adminQuery?: (text: string, values?: readonly unknown[]) => Promise<SqlResult>;
  /** The store's `transaction`, the caller's own (driver errors as they are). */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  readonly sql: {
    readonly outbox: OutboxStatements;
    readonly inbox: InboxStatements;
    readonly deadLetters: DeadLetterStatements;
    readonly versionGuards: VersionGuardStatements;
    readonly admin: DialectAdminSql;
  };
  /** What the dialect's outbox does besides the shared operations (PostgreSQL: locked claims, LISTEN, NOTIFY). */
  readonly outboxExtras?: X;
}

/**
 * Freezes a dialect's parts into a store of concern objects, the outbox, inbox, dead-letter,
 * version-guard, admin and heartbeat concerns shared by every SQL dialect, with the dialect's name
 * and extras (its pool, table names).
 */
export function composeStore<X extends object, E extends Pick<Store, 'dialect'>>(
  parts: DialectParts<X>,
  extras: E,
): Readonly<E & Omit<Store, 'dialect' | 'outbox'> & { readonly outbox: OutboxStore & X }> {
  const { connection, sql, tables: t } = parts;
  const transaction = <T>(work: (tx: SqlExecutor) => Promise<T>) => parts.transaction(work);
  const outbox = createOutboxStore(connection, sql.outbox, { outboxTable: t.outbox, transaction });
  const admin = {
    db: { query: parts.adminQuery ?? connection.run, transaction: connection.transaction },
    t,
    sql: sql.admin,
  };
  return Object.freeze({
    ...extras,
    // Not frozen: tests and wrappers derive an outbox from it (Object.create) and override methods.
    outbox: { ...outbox, ...(parts.outboxExtras as X) },
    inbox: createInboxStore(connection, sql.inbox),
    deadLetters: createDeadLetterStore(connection, sql.deadLetters, t),
    versionGuards: createVersionGuardStore(connection, sql.versionGuards),
    heartbeats: createHeartbeatStore(admin),
    admin: createAdminStore(admin),
    transaction,
    migrate: () => parts.migrate(),
    close: () => parts.close(),
  });
}
