import type { AdminStore, RelayHeartbeatStore } from './admin-store.js';
import type { DeadLetterStore, InboxStore, VersionGuardStore } from './consumer-store.js';
import type { OutboxStore } from './outbox-store.js';
import type { SqlExecutor } from './sql-executor.js';

/**
 * A database store, made of one object per concern (like a message store of outbox, inbox, dead
 * letters and admin). Components take the whole store and use the concerns they need; optional
 * capabilities (PostgreSQL's locked claims, LISTEN, NOTIFY) are optional members of the concern
 * that has them, detected by presence.
 * @example
 * const store = await createPostgresStore({ connectionString: 'postgres://localhost/app' });
 * await store.migrate();
 * const relay = new OutboxRelay({ store, publisher: transport });
 * console.log(await store.outbox.stats());
 */
export interface Store {
  readonly dialect: 'postgres' | 'mysql' | 'sqlite';
  readonly outbox: OutboxStore;
  readonly inbox: InboxStore;
  readonly deadLetters: DeadLetterStore;
  readonly versionGuards: VersionGuardStore;
  readonly heartbeats: RelayHeartbeatStore;
  readonly admin: AdminStore;
  /** Runs `work` in a transaction on the store's own connection; commits or rolls back and rethrows. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Creates or upgrades the tables: idempotent, safe to run from several processes at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

/** What a consumer uses of a store: its transaction, inbox, dead letters and version guards. */
export type ConsumerStore = Pick<Store, 'dialect' | 'transaction' | 'inbox' | 'deadLetters' | 'versionGuards'>;
