import type { DeadLetterStore, InboxStore, VersionGuardStore } from '../../ports/consumer-store.js';
import type { OutboxStore } from '../../ports/outbox-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Store } from '../../ports/store.js';
import { createAdminStore } from './admin.js';
import type { AdminContext } from './admin-context.js';
import { createHeartbeatStore } from './heartbeats.js';

/** What a dialect gives: its outbox concern, which holds the store's connection, and its consumer operations. */
export interface DialectStore extends OutboxStore, Pick<Store, 'migrate' | 'close'> {
  readonly consumer: InboxStore & DeadLetterStore & VersionGuardStore;
  readonly adminContext: AdminContext;
}

/**
 * Freezes a dialect's parts into a store of concern objects, the admin and heartbeat concerns shared
 * by every SQL dialect, with the dialect's name and extras (its pool, table names).
 */
export function composeStore<D extends DialectStore, X extends Pick<Store, 'dialect'>>(
  core: D,
  extras: X,
): Readonly<X & Omit<Store, 'dialect' | 'outbox'> & { readonly outbox: D }> {
  return Object.freeze({
    ...extras,
    outbox: core,
    inbox: core.consumer,
    deadLetters: core.consumer,
    versionGuards: core.consumer,
    heartbeats: createHeartbeatStore(core.adminContext),
    admin: createAdminStore(core.adminContext),
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => core.transaction(work),
    migrate: () => core.migrate(),
    close: () => core.close(),
  });
}
