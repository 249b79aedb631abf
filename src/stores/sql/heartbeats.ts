import type { RelayHeartbeatStore } from '../../ports/admin-store.js';
import { recordHeartbeat, recordRelayStopped } from './admin-actions.js';
import type { AdminContext } from './admin-context.js';
import { relays } from './admin-reads.js';

/** The relay heartbeats of every SQL store, in the admin tables. */
export function createHeartbeatStore(ctx: AdminContext): RelayHeartbeatStore {
  return {
    recordHeartbeat: (heartbeat) => recordHeartbeat(ctx, heartbeat),
    recordRelayStopped: (relayId, at) => recordRelayStopped(ctx, relayId, at),
    relays: () => relays(ctx),
  };
}
