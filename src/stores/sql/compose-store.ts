import type { AdminStore, RelayHeartbeatStore } from '../../ports/admin-store.js';
import type { DeadLetterStore, InboxStore, VersionGuardStore } from '../../ports/consumer-store.js';
import type { OutboxStore } from '../../ports/outbox-store.js';
import type { Store } from '../../ports/store.js';

/** The concern objects of one store and its connection-level operations. */
export interface StoreParts<O extends OutboxStore> extends Pick<Store, 'transaction' | 'migrate' | 'close'> {
  readonly outbox: O;
  readonly inbox: InboxStore;
  readonly deadLetters: DeadLetterStore;
  readonly versionGuards: VersionGuardStore;
  readonly heartbeats: RelayHeartbeatStore;
  readonly admin: AdminStore;
}

/** Freezes the parts into a store, with the dialect's name and extras (its pool, table names). */
export function composeStore<O extends OutboxStore, X extends Pick<Store, 'dialect'>>(
  parts: StoreParts<O>,
  extras: X,
): Readonly<StoreParts<O> & X> {
  return Object.freeze({ ...extras, ...parts });
}
