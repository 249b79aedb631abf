import { hostname } from 'node:os';
import type { Clock } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import type { AdminStore } from '../ports/admin-store.js';
import type { OutboxRelayStore } from '../ports/outbox-store.js';
import type { Logger } from '../core/logger.js';

type HeartbeatStore = Pick<AdminStore, 'recordHeartbeat' | 'recordRelayStopped'>;

/** Stores with the admin tables keep relay heartbeats; a bare outbox store does not. */
const keepsHeartbeats = (store: OutboxRelayStore): store is OutboxRelayStore & HeartbeatStore =>
  typeof (store as Partial<HeartbeatStore>).recordHeartbeat === 'function' &&
  typeof (store as Partial<HeartbeatStore>).recordRelayStopped === 'function';

/** Every `intervalMs`, while started: who the relay is and when it last claimed, for operators and doctor. */
export class RelayHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private write: Promise<void> | undefined;
  private startedAt = 0;

  constructor(
    private readonly store: OutboxRelayStore,
    private readonly relayId: string,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly lastClaimedAt: () => number | null,
    private readonly log: Logger,
  ) {}

  start(): void {
    const store = this.store;
    if (!keepsHeartbeats(store)) return;
    this.startedAt = this.clock.now();
    const beat = () => {
      // One write at a time: a slow database must not pile them up.
      this.write ??= this.beat(store).finally(() => (this.write = undefined));
    };
    beat();
    this.timer = setInterval(beat, this.intervalMs).unref();
  }

  /** Marks the row stopped, after any write in flight (which would otherwise mark it running again). */
  async stop(): Promise<void> {
    const store = this.store;
    if (!this.timer || !keepsHeartbeats(store)) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.write;
    try {
      await store.recordRelayStopped(this.relayId, this.clock.now());
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'marking the relay heartbeat stopped failed; it will look stale');
    }
  }

  private async beat(store: HeartbeatStore): Promise<void> {
    try {
      await store.recordHeartbeat({
        relayId: this.relayId,
        host: hostname(),
        pid: process.pid,
        startedAt: this.startedAt,
        lastClaimedAt: this.lastClaimedAt(),
        lastSeenAt: this.clock.now(),
      });
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'writing the relay heartbeat failed; will try again');
    }
  }
}
