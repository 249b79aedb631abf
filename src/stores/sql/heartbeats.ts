import type { RelayHeartbeatStore } from '../../ports/admin-store.js';
import { recordHeartbeat, recordRelayStopped } from '../shared/admin-actions.js';
import type { AdminContext } from '../shared/admin-context.js';
import { relays } from '../shared/admin-reads.js';

/** The relay heartbeats of every SQL store, in the admin tables. */
export function createHeartbeatStore(ctx: AdminContext): RelayHeartbeatStore {
  return {
    recordHeartbeat: (heartbeat) => recordHeartbeat(ctx, heartbeat),
    recordRelayStopped: (relayId, at) => recordRelayStopped(ctx, relayId, at),
    relays: () => relays(ctx),
  };
}
