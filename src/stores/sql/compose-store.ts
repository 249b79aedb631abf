import type { OutboxStore } from '../../ports/outbox-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';
import { createAdminStore } from './admin.js';
import type { AdminContext } from './admin-context.js';
import { createDeadLetterStore, type DeadLetterStatements } from './dead-letters.js';
import { createHeartbeatStore } from './heartbeats.js';
import { createInboxStore, type InboxStatements } from './inbox.js';
import type { TableNames } from './naming.js';
import type { OwnConnection } from './own-connection.js';
import { createVersionGuardStore, type VersionGuardStatements } from './version-guards.js';

/** What a dialect gives: its outbox concern, its connection, its consumer statements and its admin context. */
export interface DialectParts<O extends OutboxStore> extends Pick<Store, 'migrate' | 'close'> {
  readonly outbox: O;
  readonly tables: TableNames;
  /** The store's own connection, as the shared concerns use it. */
  readonly connection: OwnConnection;
  readonly consumerSql: {
    readonly inbox: InboxStatements;
    readonly deadLetters: DeadLetterStatements;
    readonly versionGuards: VersionGuardStatements;
  };
  readonly adminContext: AdminContext;
}

/**
 * Freezes a dialect's parts into a store of concern objects, the inbox, dead-letter, version-guard,
 * admin and heartbeat concerns shared by every SQL dialect, with the dialect's name and extras (its pool, table names).
 */
export function composeStore<O extends OutboxStore, X extends Pick<Store, 'dialect'>>(
  parts: DialectParts<O>,
  extras: X,
): Readonly<X & Omit<Store, 'dialect' | 'outbox'> & { readonly outbox: O }> {
  const { outbox, connection, consumerSql } = parts;
  return Object.freeze({
    ...extras,
    outbox,
    inbox: createInboxStore(connection, consumerSql.inbox),
    deadLetters: createDeadLetterStore(connection, consumerSql.deadLetters, parts.tables),
    versionGuards: createVersionGuardStore(connection, consumerSql.versionGuards),
    heartbeats: createHeartbeatStore(parts.adminContext),
    admin: createAdminStore(parts.adminContext),
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => outbox.transaction(work),
    migrate: () => parts.migrate(),
    close: () => parts.close(),
  });
}
