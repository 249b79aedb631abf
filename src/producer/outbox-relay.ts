import { Registry } from 'prom-client';
import { describeError } from '../core/errors.js';
import { componentLogger } from '../core/default-logger.js';
import type { Logger } from '../core/logger.js';
import type { OutboxRelayStore } from '../ports/outbox-store.js';
import type { Claim, ClaimSource } from './claims/claim-source.js';
import { Flight } from './claims/flight.js';
import { LeaseClaims } from './claims/lease-claims.js';
import { LockedClaims, type LockingStore } from './claims/locked-claims.js';
import { rowPublisher } from './claims/publish-row.js';
import { RelayHeartbeat } from './relay-heartbeat.js';
import { RelayFailures } from './relay-failures.js';
import { RelayMetrics } from './relay-metrics.js';
import { resolveRelayOptions, type RelayOptions, type ResolvedRelayOptions } from './relay-options.js';
import { RelayWakeUps } from './relay-wake-ups.js';
import { RetentionJob } from './retention.js';

/**
 * Moves committed outbox rows to the broker. A row is marked sent only on the broker's positive
 * confirm of that very message; every other outcome leaves it pending with a backoff, and after
 * `maxAttempts` it goes dead and `onDead` fires. Publishing is pipelined: new rows are claimed
 * while earlier ones await their confirms, up to `maxInFlight`. How rows are claimed and settled is
 * chosen once, from the store: row locks of an open transaction where it has them (PostgreSQL),
 * else leases written on the rows (see `claims/`).
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
  /** Whether batches are claimed as row locks (see the class comment). */
  readonly locked: boolean;
  private readonly log: Logger;
  private readonly store: OutboxRelayStore;
  private readonly claims: ClaimSource;
  private readonly flight: Flight;
  private readonly wakeUps: RelayWakeUps;
  private readonly heartbeat: RelayHeartbeat;
  private running = false;
  /** Which start() set up what runs; a setup overtaken by a stop (and maybe a new start) starts nothing more. */
  private run = 0;
  /** The setup of the last start(); stop() waits for it, so that nothing it sets up outlives the stop. */
  private starting: Promise<void> = Promise.resolve();
  /** The whole teardown of the last stop(), which may outlast stop() itself; start() waits for it. */
  private teardown: Promise<void> = Promise.resolve();
  private loopDone: Promise<void> = Promise.resolve();
  private retention: RetentionJob | undefined;
  /** Claims running (the loop's and a side claim). */
  private claiming = 0;
  /** The claim started by a commit heard while the loop's own claim ran, if any. */
  private sideClaim: Promise<void> | undefined;
  private lastClaimAt: number | null = null;

  constructor(options: RelayOptions) {
    this.options = resolveRelayOptions(options);
    const o = this.options;
    // The one place the relay reads its store: every part below is given what it needs of it.
    const store = o.store;
    this.store = store;
    this.log = componentLogger(options.logger, 'surety-relay');
    this.registry = options.registry ?? new Registry();
    this.metrics = new RelayMetrics(this.registry, store, o.clock);
    this.flight = new Flight(o.maxInFlight);
    this.wakeUps = new RelayWakeUps(store, o, this.log);
    const failures = new RelayFailures(o, this.metrics, this.log);
    const publish = rowPublisher(o, this.metrics, this.log);
    const relay = { wake: () => this.wake(), running: () => this.running };
    this.locked = o.lockedClaims && typeof store.claimLocked === 'function';
    const leases = new LeaseClaims(store, o, this.flight, publish, failures, this.log, relay);
    this.claims = this.locked
      ? new LockedClaims(leases, store as LockingStore, o, this.flight, publish, failures, this.log, relay)
      : leases;
    this.heartbeat = new RelayHeartbeat(
      o.heartbeats,
      o.relayId,
      o.clock,
      o.heartbeatMs,
      () => this.lastClaimAt,
      this.log,
    );
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
    const run = ++this.run;
    // A stop() that timed out may still be ending the last run: this one begins once that has ended.
    this.starting = this.teardown.then(() => this.setUp(run));
    await this.starting;
  }

  private async setUp(run: number): Promise<void> {
    const o = this.options;
    if (!this.running || this.run !== run) return;
    await this.wakeUps.start();
    if (!this.running || this.run !== run) return; // stopped meanwhile (and maybe started again): start nothing more
    if (o.retention) {
      this.retention = new RetentionJob(this.store, o.relayId, o.clock, o.retention, this.log);
      this.retention.start();
    }
    this.loopDone = this.loop();
    this.heartbeat.start();
    this.log.info({ relayId: o.relayId }, 'outbox relay started');
  }

  /** Claim now instead of at the next poll. */
  wake(): void {
    this.wakeUps.wake();
  }

  /**
   * Graceful stop: no new claims, in-flight publishes settle (confirmed rows are marked sent, the
   * rest recorded as failed), then claims are let go.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const unheard = this.wakeUps.stop(); // at once: a stopping relay hears no more commits
    this.wake();
    this.flight.freed.fire();
    // Every wait below ends by `shutdownTimeoutMs`: a database or broker that stopped answering must not
    // hold the stop. What is still running then ends on its own and lets its rows go (see loop()).
    const deadline = later(this.options.shutdownTimeoutMs);
    const within = (work: Promise<unknown>) => endsBefore(work, deadline);
    const teardown = (async () => {
      await this.starting; // a start still setting up finishes first; what it set up is undone below
      await Promise.all([unheard, this.wakeUps.stop()]);
      await this.retention?.stop();
      await this.loopDone;
      await this.sideClaim;
    })();
    this.teardown = teardown.catch(() => undefined);
    const ended = await within(teardown);
    if (!ended) this.log.warn({}, 'relay stopped with a claim or purge still waiting for the database');
    const inFlight = this.claims.unsettled();
    const settled = inFlight.length === 0 || (await within(Promise.allSettled(inFlight)));
    if (!settled) {
      this.log.warn({ inFlight: this.flight.rows }, this.claims.abandoned);
      // Bounded too: a connection that stopped answering must not hold the stop (the server ends it after leaseMs).
      await endsBefore(this.claims.release(), later(5_000));
    }
    // Outcomes already known get their own time to be written, even once the deadline has passed.
    if (!(await endsBefore(Promise.all([this.claims.settle(), this.heartbeat.stop()]), later(5_000))))
      this.log.warn({}, 'relay stopped before its last outcomes or heartbeat were written');
    this.log.info({ relayId: this.options.relayId }, 'outbox relay stopped');
  }

  /**
   * Claims and publishes one batch and waits until every row in it is settled. For scripts and
   * tests; a started relay does this continuously. Returns the number of rows claimed.
   */
  async runOnce(): Promise<number> {
    const { publisher, pollIntervalMs } = this.options;
    if (!publisher.isReady() && !(await publisher.waitUntilReady(Math.max(pollIntervalMs, 5_000)))) return 0;
    const claimed = await this.claim(this.options.batchSize);
    claimed.dispatch();
    await Promise.allSettled(this.claims.unsettled());
    await this.claims.settle();
    return claimed.count;
  }

  private async loop(): Promise<void> {
    const o = this.options;
    const woken = this.wakeUps.signal;
    let errorStreak = 0;
    while (this.running) {
      if (!o.publisher.isReady()) {
        // Broker down: claiming would only burn attempts. Wait for the transport instead. A closed
        // transport answers at once: then pause for the poll, or the loop would never yield.
        const from = performance.now();
        if (!(await o.publisher.waitUntilReady(o.pollIntervalMs)))
          await woken.wait(Math.max(0, o.pollIntervalMs - (performance.now() - from)));
        continue;
      }
      const room = this.flight.room();
      if (room <= 0 || !this.claims.admits()) {
        await this.flight.freed.wait(o.pollIntervalMs);
        continue;
      }
      const limit = Math.min(o.batchSize, room);
      let claimed: Claim;
      try {
        claimed = await this.claimHearing(limit);
        errorStreak = 0;
      } catch (err) {
        errorStreak++;
        const delay = o.backoff.delayMs(errorStreak);
        this.log.error({ err: describeError(err), retryInMs: delay }, 'claim failed; database unavailable?');
        await woken.wait(delay);
        continue;
      }
      if (!this.running) {
        await claimed.release().catch(() => undefined);
        break;
      }
      claimed.dispatch();
      // A full batch means more may be due: claim again at once. Otherwise wait for a commit or the poll.
      if (claimed.count < limit) await woken.wait(o.pollIntervalMs);
    }
  }

  /**
   * The loop's claim. A commit heard while it runs gets a claim of its own at once (one at a time)
   * instead of waiting behind it: this claim's snapshot may have missed that commit, and a slow claim
   * was where the fast path's slowest messages waited.
   */
  private async claimHearing(limit: number): Promise<Claim> {
    const claiming = this.claim(limit);
    const settled = claiming.then(
      () => undefined,
      () => undefined,
    );
    while (await this.wakeUps.signal.race(settled)) {
      if (this.startSideClaim()) continue;
      this.wake(); // no room for it now: the loop claims again once this claim is done
      break;
    }
    return claiming;
  }

  /** Starts the side claim if there is room and none runs. */
  private startSideClaim(): boolean {
    const limit = Math.min(this.options.batchSize, this.flight.room());
    if (!this.running || this.sideClaim || limit <= 0 || !this.claims.admits()) return false;
    this.sideClaim = this.claim(limit)
      .then(async (claimed) => {
        if (!this.running) return claimed.release();
        claimed.dispatch();
        if (claimed.count === limit) this.wake(); // more may be due
      })
      .catch((err: unknown) => {
        this.log.warn({ err: describeError(err) }, 'claim on a commit notification failed; the next claim retries');
      })
      .finally(() => {
        this.sideClaim = undefined;
        this.flight.freed.fire();
      });
    return true;
  }

  /** One claim. It counts as running, with `limit` rows reserved, until it is dispatched or let go. */
  private async claim(limit: number): Promise<Claim> {
    this.claiming++;
    this.flight.reserve(limit);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.claiming--;
      this.flight.unreserve(limit); // its unused reservation is room again, for a loop that may be waiting for it
    };
    try {
      const now = this.options.clock.now();
      this.lastClaimAt = now;
      const claimed = await this.claims.next(limit, now);
      return {
        count: claimed.count,
        dispatch: () => {
          end();
          claimed.dispatch();
        },
        release: () => {
          end();
          return claimed.release();
        },
      };
    } catch (err) {
      end();
      throw err;
    }
  }
}

/** Resolves false after `ms`, without keeping the process alive. */
function later(ms: number): Promise<false> {
  return new Promise((r) => setTimeout(r, ms, false).unref());
}

/** Whether `work` ends before `limit` does; if it fails first, that failure. One that comes later is ignored. */
function endsBefore(work: Promise<unknown>, limit: Promise<false>): Promise<boolean> {
  return Promise.race([work.then(() => true), limit]);
}
