import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { describeError, SuretyError } from '../core/errors.js';
import type { AdminStore } from '../ports/admin-store.js';
import type { OutboxRelayStore, OutboxRow } from '../ports/outbox-store.js';
import { defaultLogger, type Logger } from './logger.js';
import { wireFromRow } from './outbox-rows.js';
import { RelayMetrics } from './relay-metrics.js';
import { resolveRelayOptions, type RelayOptions, type ResolvedRelayOptions } from './relay-options.js';
import { RetentionJob } from './retention.js';
import { Signal } from './signal.js';

interface Failure {
  readonly row: OutboxRow;
  readonly error: unknown;
}

type HeartbeatStore = Pick<AdminStore, 'recordHeartbeat' | 'removeHeartbeat'>;

/** Stores with the admin tables keep relay heartbeats; a bare outbox store does not. */
const keepsHeartbeats = (store: OutboxRelayStore): store is OutboxRelayStore & HeartbeatStore =>
  typeof (store as Partial<HeartbeatStore>).recordHeartbeat === 'function' &&
  typeof (store as Partial<HeartbeatStore>).removeHeartbeat === 'function';

/**
 * Moves committed outbox rows to the broker. A row is marked sent only on the broker's positive
 * confirm of that very message; every other outcome leaves it pending with a backoff, and after
 * `maxAttempts` it goes dead and `onDead` fires. Publishing is pipelined: new rows are claimed
 * while earlier ones await their confirms, up to `maxInFlight`.
 * @example
 * const relay = new OutboxRelay({ store, publisher: transport, outbox });
 * await relay.start();
 * // ...
 * await relay.stop();
 */
export class OutboxRelay {
  readonly options: ResolvedRelayOptions;
  readonly registry: Registry;
  readonly metrics: RelayMetrics;
  private readonly log: Logger;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly wakeSignal = new Signal();
  private readonly slotSignal = new Signal();
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly toMark: number[] = [];
  private readonly failures: Failure[] = [];
  private settling: Promise<void> | undefined;
  private settleScheduled = false;
  private stopListening: (() => Promise<void>) | undefined;
  private unsubscribeOutbox: (() => void) | undefined;
  private retention: RetentionJob | undefined;
  private lastClaimAt: number | null = null;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatWrite: Promise<void> | undefined;
  private startedAt = 0;

  constructor(options: RelayOptions) {
    this.options = resolveRelayOptions(options);
    this.log = options.logger ?? defaultLogger('surety-relay');
    this.registry = options.registry ?? new Registry();
    this.metrics = new RelayMetrics(this.registry, this.options.store, this.options.clock);
  }

  get id(): string {
    return this.options.relayId;
  }

  /** Time of the last claim query, for health checks. */
  get lastClaimedAt(): number | null {
    return this.lastClaimAt;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const o = this.options;
    this.unsubscribeOutbox = o.outbox?.onCommitted(() => this.wake());
    if (o.listen && o.store.listenForCommits) await this.listen();
    if (o.retention) {
      this.retention = new RetentionJob(o.store, o.relayId, o.clock, o.retention, this.log);
      this.retention.start();
    }
    this.loopDone = this.loop();
    this.startHeartbeat();
    this.log.info({ relayId: o.relayId }, 'outbox relay started');
  }

  /** Claim now instead of at the next poll. */
  wake(): void {
    this.wakeSignal.fire();
  }

  /**
   * Graceful stop: no new claims, in-flight publishes settle (confirmed rows are marked sent, the
   * rest recorded as failed), then claims are let go.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    this.slotSignal.fire();
    this.unsubscribeOutbox?.();
    await this.retention?.stop();
    await this.stopListening?.().catch(() => undefined);
    await this.loopDone;
    const deadline = new Promise<'timeout'>((r) =>
      setTimeout(() => r('timeout'), this.options.shutdownTimeoutMs).unref(),
    );
    const settled = await Promise.race([
      Promise.allSettled([...this.inFlight.values()]).then(() => 'ok' as const),
      deadline,
    ]);
    if (settled === 'timeout')
      this.log.warn(
        { inFlight: this.inFlight.size },
        'relay stopped with publishes unconfirmed; their leases will expire',
      );
    await this.settle();
    await this.stopHeartbeat();
    this.log.info({ relayId: this.options.relayId }, 'outbox relay stopped');
  }

  /**
   * Claims and publishes one batch and waits until every row in it is settled. For scripts and
   * tests; a started relay does this continuously. Returns the number of rows claimed.
   */
  async runOnce(): Promise<number> {
    const { publisher, pollIntervalMs } = this.options;
    if (!publisher.isReady() && !(await publisher.waitUntilReady(Math.max(pollIntervalMs, 5_000)))) return 0;
    const rows = await this.claim(this.options.batchSize);
    rows.forEach((row) => this.publish(row));
    await Promise.allSettled([...this.inFlight.values()]);
    await this.settle();
    return rows.length;
  }

  private async loop(): Promise<void> {
    const o = this.options;
    let errorStreak = 0;
    while (this.running) {
      if (!o.publisher.isReady()) {
        // Broker down: claiming would only burn attempts. Wait for the transport instead.
        await o.publisher.waitUntilReady(o.pollIntervalMs);
        continue;
      }
      const room = o.maxInFlight - this.inFlight.size;
      if (room <= 0) {
        await this.slotSignal.wait(o.pollIntervalMs);
        continue;
      }
      const limit = Math.min(o.batchSize, room);
      let rows: OutboxRow[];
      try {
        rows = await this.claim(limit);
        errorStreak = 0;
      } catch (err) {
        errorStreak++;
        const delay = o.backoff.delayMs(errorStreak);
        this.log.error({ err: describeError(err), retryInMs: delay }, 'claim failed; database unavailable?');
        await this.wakeSignal.wait(delay);
        continue;
      }
      if (!this.running) {
        await o.store
          .release(
            o.relayId,
            rows.map((r) => r.seq),
            o.clock.now(),
          )
          .catch(() => undefined);
        break;
      }
      for (const row of rows) this.publish(row);
      // A full batch means more may be due: claim again at once. Otherwise wait for a commit or the poll.
      if (rows.length < limit) await this.wakeSignal.wait(o.pollIntervalMs);
    }
  }

  private async claim(limit: number): Promise<OutboxRow[]> {
    const o = this.options;
    const now = o.clock.now();
    this.lastClaimAt = now;
    return o.store.claim({ owner: o.relayId, limit, now, leaseMs: o.leaseMs, ordered: o.ordered });
  }

  private publish(row: OutboxRow): void {
    const started = performance.now();
    const done = this.options.publisher.publish({ topic: row.topic, message: wireFromRow(row) }).then(
      () => {
        this.metrics.publishDuration.observe({ outcome: 'confirmed' }, (performance.now() - started) / 1000);
        this.metrics.attempts.inc({ outcome: 'confirmed' });
        this.toMark.push(row.seq);
        try {
          this.options.onConfirmed?.(row);
        } catch (err) {
          this.log.error({ err: describeError(err), messageId: row.messageId }, 'onConfirmed hook threw');
        }
      },
      (error: unknown) => {
        const outcome = outcomeOf(error);
        this.metrics.publishDuration.observe({ outcome }, (performance.now() - started) / 1000);
        this.metrics.attempts.inc({ outcome });
        this.failures.push({ row, error });
      },
    );
    const tracked = done.finally(() => {
      this.inFlight.delete(row.seq);
      this.slotSignal.fire();
      this.scheduleSettle();
    });
    this.inFlight.set(row.seq, tracked);
  }

  /** Coalesces the confirms of one tick into one settle pass. */
  private scheduleSettle(): void {
    if (this.settleScheduled) return;
    this.settleScheduled = true;
    setImmediate(() => {
      this.settleScheduled = false;
      void this.settle();
    });
  }

  /** Single flight: every caller waits for the one pass that drains all outcomes, including late ones. */
  private settle(): Promise<void> {
    this.settling ??= this.drainOutcomes().finally(() => (this.settling = undefined));
    return this.settling;
  }

  /** Writes outcomes back in batches: confirmed rows marked sent, failures rescheduled or dead. */
  private async drainOutcomes(): Promise<void> {
    const o = this.options;
    while (this.toMark.length > 0 || this.failures.length > 0) {
      if (this.toMark.length > 0) {
        const batch = this.toMark.splice(0, o.markSentBatchSize);
        try {
          await o.store.markSent(batch, o.clock.now());
          if (o.ordered) this.wake(); // the next row of each key may now be claimable
        } catch (err) {
          // Keep them: a confirmed row must not be republished just because the mark failed once.
          this.toMark.unshift(...batch);
          this.log.error({ err: describeError(err), rows: batch.length }, 'marking rows sent failed; retrying');
          // A plain pause: waiting on the wake signal would swallow wake-ups meant for the claim loop.
          await new Promise((r) => setTimeout(r, o.backoff.delayMs(1)));
          if (!this.running && this.inFlight.size === 0) break;
          continue;
        }
      }
      const failure = this.failures.shift();
      if (failure) await this.recordFailure(failure);
    }
  }

  private async recordFailure({ row, error }: Failure): Promise<void> {
    const o = this.options;
    const attempts = row.attempts + 1;
    const dead = attempts >= o.maxAttempts;
    const now = o.clock.now();
    const nextAttemptAt = dead ? now : now + o.backoff.delayMs(attempts);
    const reason = describeError(error);
    try {
      const recorded = await o.store.recordFailure({
        seq: row.seq,
        owner: o.relayId,
        attempts,
        nextAttemptAt,
        dead,
        error: reason,
        now,
      });
      if (!recorded) return; // our lease expired and another relay owns the row now
    } catch (err) {
      this.log.error(
        { err: describeError(err), messageId: row.messageId },
        'recording a failed publish failed; the lease will expire',
      );
      return;
    }
    if (!dead) {
      this.log.warn(
        { messageId: row.messageId, type: row.type, attempts, nextAttemptAt, reason },
        'publish failed; will retry',
      );
      return;
    }
    this.metrics.dead.inc();
    this.log.error(
      { messageId: row.messageId, type: row.type, key: row.key, attempts, reason },
      'outbox row is dead after its last attempt',
    );
    try {
      await o.onDead?.({ ...row, attempts, status: 'dead', lastError: reason }, error);
    } catch (err) {
      this.log.error({ err: describeError(err), messageId: row.messageId }, 'onDead hook threw');
    }
  }

  /** Every heartbeatMs, while started: who this relay is and when it last claimed, for operators and doctor. */
  private startHeartbeat(): void {
    const store = this.options.store;
    if (!keepsHeartbeats(store)) return;
    this.startedAt = this.options.clock.now();
    const beat = () => {
      // One write at a time: a slow database must not pile them up.
      this.heartbeatWrite ??= this.writeHeartbeat(store).finally(() => (this.heartbeatWrite = undefined));
    };
    beat();
    this.heartbeatTimer = setInterval(beat, this.options.heartbeatMs).unref();
  }

  private async writeHeartbeat(store: HeartbeatStore): Promise<void> {
    const o = this.options;
    try {
      await store.recordHeartbeat({
        relayId: o.relayId,
        host: hostname(),
        pid: process.pid,
        startedAt: this.startedAt,
        lastClaimedAt: this.lastClaimAt,
        lastSeenAt: o.clock.now(),
      });
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'writing the relay heartbeat failed; will try again');
    }
  }

  /** Removes the row, after any write in flight (which would otherwise bring it back). */
  private async stopHeartbeat(): Promise<void> {
    const store = this.options.store;
    if (!this.heartbeatTimer || !keepsHeartbeats(store)) return;
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    await this.heartbeatWrite;
    try {
      await store.removeHeartbeat(this.options.relayId);
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'removing the relay heartbeat failed; it will look stale');
    }
  }

  private async listen(): Promise<void> {
    const store = this.options.store;
    const retry = () => {
      if (!this.running) return;
      this.stopListening = undefined;
      setTimeout(() => void this.listen(), this.options.pollIntervalMs).unref();
    };
    try {
      this.stopListening = await store.listenForCommits!(
        () => this.wake(),
        (err) => {
          this.log.warn({ err: describeError(err) }, 'commit notifications lost; polling until they are back');
          void this.stopListening?.().catch(() => undefined);
          retry();
        },
      );
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'cannot listen for commits; polling');
      retry();
    }
  }
}

function outcomeOf(error: unknown): string {
  if (!(error instanceof SuretyError)) return 'error';
  switch (error.code) {
    case 'SURETY_PUBLISH_NACKED':
      return 'nacked';
    case 'SURETY_PUBLISH_UNROUTABLE':
      return 'unroutable';
    case 'SURETY_PUBLISH_TIMEOUT':
      return 'timeout';
    case 'SURETY_CONNECTION_LOST':
      return 'connection_lost';
    default:
      return 'error';
  }
}
