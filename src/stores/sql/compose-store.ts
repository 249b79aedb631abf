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

/** What a dialect gives: its outbox concern, which holds the store's connection, and its consumer statements. */
export interface DialectStore extends OutboxStore, Pick<Store, 'migrate' | 'close'> {
  readonly tables: TableNames;
  /** The store's own connection, as the shared consumer concerns use it. */
  readonly ownConnection: OwnConnection;
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
export function composeStore<D extends DialectStore, X extends Pick<Store, 'dialect'>>(
  core: D,
  extras: X,
): Readonly<X & Omit<Store, 'dialect' | 'outbox'> & { readonly outbox: D }> {
  return Object.freeze({
    ...extras,
    outbox: core,
    inbox: createInboxStore(core.ownConnection, core.consumerSql.inbox),
    deadLetters: createDeadLetterStore(core.ownConnection, core.consumerSql.deadLetters, core.tables),
    versionGuards: createVersionGuardStore(core.ownConnection, core.consumerSql.versionGuards),
    heartbeats: createHeartbeatStore(core.adminContext),
    admin: createAdminStore(core.adminContext),
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => core.transaction(work),
    migrate: () => core.migrate(),
    close: () => core.close(),
  });
}
