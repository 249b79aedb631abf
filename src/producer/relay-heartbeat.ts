import { hostname } from 'node:os';
import type { Clock } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import type { RelayHeartbeatStore } from '../ports/admin-store.js';
import type { Logger } from '../core/logger.js';

export type HeartbeatStore = Pick<RelayHeartbeatStore, 'recordHeartbeat' | 'recordRelayStopped'>;

/** Every `intervalMs`, while started: who the relay is and when it last claimed, for operators and doctor. */
export class RelayHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private write: Promise<void> | undefined;
  private startedAt = 0;

  constructor(
    /** Undefined for a relay given a bare outbox concern: it keeps no heartbeats. */
    private readonly store: HeartbeatStore | undefined,
    private readonly relayId: string,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly lastClaimedAt: () => number | null,
    private readonly log: Logger,
  ) {}

  start(): void {
    const store = this.store;
    if (!store) return;
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
    if (!this.timer || !store) return;
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
