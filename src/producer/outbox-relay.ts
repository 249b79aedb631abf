import { Registry } from 'prom-client';
import { describeError } from '../core/errors.js';
import type { FailureUpdate, LockedBatch, OutboxRow } from '../ports/outbox-store.js';
import { componentLogger } from '../core/default-logger.js';
import type { Logger } from '../core/logger.js';
import { wireFromRow } from './outbox-rows.js';
import { RelayHeartbeat } from './relay-heartbeat.js';
import { LeaseWriteBack } from './lease-write-back.js';
import { outcomeOf, RelayFailures } from './relay-failures.js';
import { RelayMetrics } from './relay-metrics.js';
import { resolveRelayOptions, type RelayOptions, type ResolvedRelayOptions } from './relay-options.js';
import { RetentionJob } from './retention.js';
import { Signal } from './signal.js';

interface Claimed {
  readonly count: number;
  /** Starts publishing what was claimed. */
  dispatch(): void;
  /** Lets the claim go unpublished (stopping). */
  release(): Promise<void>;
}

/**
 * Moves committed outbox rows to the broker. A row is marked sent only on the broker's positive
 * confirm of that very message; every other outcome leaves it pending with a backoff, and after
 * `maxAttempts` it goes dead and `onDead` fires. Publishing is pipelined: new rows are claimed
 * while earlier ones await their confirms, up to `maxInFlight`. Where the store has locked claims
 * (PostgreSQL), a batch is claimed as row locks of an open transaction and settled in it once every
 * row has its outcome; elsewhere a claim writes a lease and outcomes are written back as they come.
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
  /** The setup of the last start(); stop() waits for it, so that nothing it sets up outlives the stop. */
  private starting: Promise<void> = Promise.resolve();
  /** The whole teardown of the last stop(), which may outlast stop() itself; start() waits for it. */
  private teardown: Promise<void> = Promise.resolve();
  /** Which start() a listen belongs to: one left over from an earlier run ends itself. */
  private run = 0;
  private listenRetry: NodeJS.Timeout | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly wakeSignal = new Signal();
  private readonly slotSignal = new Signal();
  /** Rows published and not yet settled: their count, and in lease mode each one's work, for stop() to await. */
  private inFlight = 0;
  private readonly publishes = new Set<Promise<void>>();
  private stopListening: (() => Promise<void>) | undefined;
  private unsubscribeOutbox: (() => void) | undefined;
  private detachHandoff: (() => void) | undefined;
  private retention: RetentionJob | undefined;
  /** Locked batches in flight, each holding its transaction until its rows are settled. */
  private readonly batches = new Map<Promise<void>, LockedBatch>();
  /** Claims running (the loop's and a side claim), and the rows they may still return. */
  private claiming = 0;
  private reserved = 0;
  /** The claim started by a commit heard while the loop's own claim ran, if any. */
  private sideClaim: Promise<void> | undefined;
  private lastClaimAt: number | null = null;
  private readonly heartbeat: RelayHeartbeat;
  private readonly failures: RelayFailures;
  private readonly writeBack: LeaseWriteBack;

  constructor(options: RelayOptions) {
    this.options = resolveRelayOptions(options);
    this.log = componentLogger(options.logger, 'surety-relay');
    this.registry = options.registry ?? new Registry();
    this.metrics = new RelayMetrics(this.registry, this.options.store, this.options.clock);
    const o = this.options;
    this.failures = new RelayFailures(o, this.metrics, this.log);
    this.writeBack = new LeaseWriteBack(o, this.failures, this.log, {
      wake: () => this.wake(),
      givenUp: () => !this.running && this.inFlight === 0,
    });
    this.heartbeat = new RelayHeartbeat(
      o.heartbeats,
      o.relayId,
      o.clock,
      o.heartbeatMs,
      () => this.lastClaimAt,
      this.log,
    );
  }

  /** Whether batches are claimed as row locks (see the class comment). */
  get locked(): boolean {
    return this.options.lockedClaims && typeof this.options.store.claimLocked === 'function';
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
    this.unsubscribeOutbox = o.outbox?.onCommitted(() => this.wake());
    if (o.handoff && !o.ordered)
      this.detachHandoff = o.outbox?.attachHandoff(
        { owner: o.relayId, leaseMs: o.leaseMs, take: (rows) => this.takeHanded(rows) },
        o.store,
      );
    if (o.listen && o.store.listenForCommits) await this.listen(run);
    if (!this.running || this.run !== run) return; // stopped meanwhile (and maybe started again): start nothing more
    if (o.retention) {
      this.retention = new RetentionJob(o.store, o.relayId, o.clock, o.retention, this.log);
      this.retention.start();
    }
    this.loopDone = this.loop();
    this.heartbeat.start();
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
    this.letGoOfOutbox(); // at once: commits from now on are not handed to a stopping relay
    this.wake();
    this.slotSignal.fire();
    // Every wait below ends by `shutdownTimeoutMs`: a database or broker that stopped answering must not
    // hold the stop. What is still running then ends on its own and lets its rows go (see loop()).
    const deadline = later(this.options.shutdownTimeoutMs);
    const within = (work: Promise<unknown>) => endsBefore(work, deadline);
    clearTimeout(this.listenRetry);
    this.listenRetry = undefined;
    const teardown = (async () => {
      await this.starting; // a start still setting up finishes first; what it set up is undone below
      this.letGoOfOutbox();
      await this.retention?.stop();
      const unlisten = this.stopListening;
      this.stopListening = undefined;
      await unlisten?.().catch(() => undefined);
      await this.loopDone;
      await this.sideClaim;
    })();
    this.teardown = teardown.catch(() => undefined);
    const ended = await within(teardown);
    if (!ended) this.log.warn({}, 'relay stopped with a claim or purge still waiting for the database');
    const inFlight = this.unsettled();
    const settled = inFlight.length === 0 || (await within(Promise.allSettled(inFlight)));
    if (!settled) {
      this.log.warn(
        { inFlight: this.inFlight },
        this.locked
          ? 'relay stopped with publishes unconfirmed; their rows are let go'
          : 'relay stopped with publishes unconfirmed; their leases will expire',
      );
      // Bounded too: a connection that stopped answering must not hold the stop (the server ends it after leaseMs).
      await endsBefore(Promise.all([...this.batches.values()].map((b) => b.release())), later(5_000));
    }
    // Outcomes already known get their own time to be written, even once the deadline has passed.
    if (!(await endsBefore(Promise.all([this.writeBack.settle(), this.heartbeat.stop()]), later(5_000))))
      this.log.warn({}, 'relay stopped before its last outcomes or heartbeat were written');
    this.log.info({ relayId: this.options.relayId }, 'outbox relay stopped');
  }

  private letGoOfOutbox(): void {
    this.unsubscribeOutbox?.();
    this.unsubscribeOutbox = undefined;
    this.detachHandoff?.();
    this.detachHandoff = undefined;
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
    await Promise.allSettled(this.unsettled());
    await this.writeBack.settle();
    return claimed.count;
  }

  private async loop(): Promise<void> {
    const o = this.options;
    let errorStreak = 0;
    while (this.running) {
      if (!o.publisher.isReady()) {
        // Broker down: claiming would only burn attempts. Wait for the transport instead. A closed
        // transport answers at once: then pause for the poll, or the loop would never yield.
        const from = performance.now();
        if (!(await o.publisher.waitUntilReady(o.pollIntervalMs)))
          await this.wakeSignal.wait(Math.max(0, o.pollIntervalMs - (performance.now() - from)));
        continue;
      }
      const room = this.room();
      if (room <= 0 || (this.locked && this.batches.size + this.claiming >= o.maxLockedBatches)) {
        await this.slotSignal.wait(o.pollIntervalMs);
        continue;
      }
      const limit = Math.min(o.batchSize, room);
      let claimed: Claimed;
      try {
        claimed = await this.claimHearing(limit);
        errorStreak = 0;
      } catch (err) {
        errorStreak++;
        const delay = o.backoff.delayMs(errorStreak);
        this.log.error({ err: describeError(err), retryInMs: delay }, 'claim failed; database unavailable?');
        await this.wakeSignal.wait(delay);
        continue;
      }
      if (!this.running) {
        await claimed.release().catch(() => undefined);
        break;
      }
      claimed.dispatch();
      // A full batch means more may be due: claim again at once. Otherwise wait for a commit or the poll.
      if (claimed.count < limit) await this.wakeSignal.wait(o.pollIntervalMs);
    }
  }

  /** What publishes rows now: lease-mode publishes one by one, locked batches whole. */
  private unsettled(): Promise<void>[] {
    return [...this.publishes, ...this.batches.keys()];
  }

  /** Rows a new claim may take: in flight and reserved by running claims count against `maxInFlight`. */
  private room(): number {
    return this.options.maxInFlight - this.inFlight - this.reserved;
  }

  /**
   * The loop's claim. A commit heard while it runs gets a claim of its own at once (one at a time)
   * instead of waiting behind it: this claim's snapshot may have missed that commit, and a slow claim
   * was where the fast path's slowest messages waited.
   */
  private async claimHearing(limit: number): Promise<Claimed> {
    const claiming = this.claim(limit);
    const settled = claiming.then(
      () => undefined,
      () => undefined,
    );
    while (await this.wakeSignal.race(settled)) {
      if (this.startSideClaim()) continue;
      this.wakeSignal.fire(); // no room for it now: the loop claims again once this claim is done
      break;
    }
    return claiming;
  }

  /**
   * Starts the side claim if there is room and none runs. With locked claims the relay still holds at
   * most `maxLockedBatches` + 1 connections: batches, the loop's claim and this one.
   */
  private startSideClaim(): boolean {
    const o = this.options;
    const limit = Math.min(o.batchSize, this.room());
    if (!this.running || this.sideClaim || limit <= 0) return false;
    if (this.locked && this.batches.size + this.claiming > o.maxLockedBatches) return false;
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
        this.slotSignal.fire();
      });
    return true;
  }

  /**
   * One claim, in the mode of this relay: what it took, how to publish it, how to let it go
   * unpublished. It counts as running, with `limit` rows reserved, until it is dispatched or let go.
   */
  private async claim(limit: number): Promise<Claimed> {
    this.claiming++;
    this.reserved += limit;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.claiming--;
      this.reserved -= limit;
      this.slotSignal.fire(); // its unused reservation is room again, for a loop that may be waiting for it
    };
    try {
      const claimed = await this.claimRows(limit);
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

  private async claimRows(limit: number): Promise<Claimed> {
    const o = this.options;
    const now = o.clock.now();
    this.lastClaimAt = now;
    if (this.locked) {
      const batch = await o.store.claimLocked!({ limit, now, leaseMs: o.leaseMs, ordered: o.ordered });
      return {
        count: batch.rows.length,
        dispatch: () => {
          if (batch.rows.length === 0) return;
          const run = this.runBatch(batch)
            .catch((err: unknown) => {
              this.log.error({ err: describeError(err) }, 'running a claimed batch failed');
              return batch.release();
            })
            .finally(() => {
              this.batches.delete(run);
              this.slotSignal.fire();
            });
          this.batches.set(run, batch);
        },
        release: () => batch.release(),
      };
    }
    const rows = await o.store.claim({ owner: o.relayId, limit, now, leaseMs: o.leaseMs, ordered: o.ordered });
    return {
      count: rows.length,
      dispatch: () => rows.forEach((row) => this.publish(row)),
      release: async () => {
        await o.store.release(
          o.relayId,
          rows.map((r) => r.seq),
          o.clock.now(),
        );
      },
    };
  }

  /** Publishes every row of `batch`, then settles them all in its transaction. Never rejects. */
  private async runBatch(batch: LockedBatch): Promise<void> {
    const o = this.options;
    // The batch's own promise (in `batches`) is what stop() awaits; rows are only counted.
    this.inFlight += batch.rows.length;
    const outcomes = await Promise.all(batch.rows.map((row) => this.publishRow(row).finally(() => this.rowDone())));
    const sent: number[] = [];
    const failed: { row: OutboxRow; update: FailureUpdate; error: unknown }[] = [];
    batch.rows.forEach((row, i) => {
      const outcome = outcomes[i];
      if (outcome) failed.push({ row, update: this.failures.update(row, outcome.cause), error: outcome.cause });
      else sent.push(row.seq);
    });
    let recorded: ReadonlySet<number>;
    try {
      recorded = new Set(
        await batch.settle(
          sent,
          failed.map((f) => f.update),
          o.clock.now(),
        ),
      );
    } catch (err) {
      await batch.release().catch(() => undefined);
      if (this.running)
        this.log.error(
          { err: describeError(err), rows: batch.rows.length },
          'settling a claimed batch failed; its rows stay pending and will be published again',
        );
      else this.log.warn({ rows: batch.rows.length }, 'a batch let go at stop settled too late; its rows stay pending');
      return;
    }
    // A failure not recorded: the row changed hands after the lock was lost; its new owner reports it.
    for (const f of failed) if (recorded.has(f.row.seq)) await this.failures.report(f.row, f.update, f.error);
    if (o.ordered) this.wake(); // the next row of each key may now be claimable
  }

  /**
   * Rows {@link Outbox.transaction} committed already claimed by this relay: published at once, as
   * lease-mode rows, as far as there is room. Not taken (and so made due for any relay): all of them
   * while stopped or while the broker is unreachable, those past half their lease, those beyond room.
   */
  private takeHanded(rows: readonly OutboxRow[]): readonly OutboxRow[] {
    const o = this.options;
    if (!this.running || !o.publisher.isReady()) return rows;
    const now = o.clock.now();
    const left: OutboxRow[] = [];
    let room = this.room();
    for (const row of rows) {
      const fresh = row.claimedBy === o.relayId && row.nextAttemptAt - now >= o.leaseMs / 2;
      if (fresh && room-- > 0) this.publish(row);
      else left.push(row);
    }
    return left;
  }

  /** Lease mode: outcomes are written back in batches as they come (see LeaseWriteBack). */
  private publish(row: OutboxRow): void {
    this.inFlight++;
    const work = this.publishRow(row)
      .then((failed) => {
        if (failed) this.writeBack.failed(row, failed.cause);
        else this.writeBack.confirmed(row.seq);
      })
      .finally(() => {
        this.publishes.delete(work);
        this.rowDone();
      });
    this.publishes.add(work);
  }

  /** A row left flight. Only a loop waiting for room needs to hear of it: it is woken per row only then. */
  private rowDone(): void {
    const wasFull = this.room() <= 0;
    this.inFlight--;
    if (wasFull) this.slotSignal.fire();
  }

  /** Publishes one row; resolves (never rejects) once the broker decided: undefined when confirmed. */
  private async publishRow(row: OutboxRow): Promise<{ cause: unknown } | undefined> {
    const started = performance.now();
    let failed: { cause: unknown } | undefined;
    try {
      await this.options.publisher.publish({ topic: row.topic, message: wireFromRow(row) });
    } catch (cause) {
      failed = { cause }; // also a publisher that throws instead of rejecting: this row fails, no other
    }
    this.observe(row, failed, (performance.now() - started) / 1000);
    return failed;
  }

  /** Metrics and the onConfirmed hook; never throws (the hook is caught, the logger never throws). */
  private observe(row: OutboxRow, failed: { cause: unknown } | undefined, seconds: number): void {
    const outcome = failed ? outcomeOf(failed.cause) : 'confirmed';
    this.metrics.publishDuration.observe({ outcome }, seconds);
    this.metrics.attempts.inc({ outcome });
    if (failed) return;
    const hookFailed = (err: unknown) =>
      this.log.error({ err: describeError(err), messageId: row.messageId }, 'onConfirmed hook threw');
    try {
      // Not awaited: the row is marked sent whatever the hook does, and an async hook must not hold the batch.
      const returned: unknown = this.options.onConfirmed?.(row);
      if (typeof (returned as PromiseLike<void> | undefined)?.then === 'function')
        Promise.resolve(returned).catch(hookFailed);
    } catch (err) {
      hookFailed(err);
    }
  }

  /** Subscribes to commit notifications for run `run`; on loss, or if refused, tries again after the poll. */
  private async listen(run: number): Promise<void> {
    const current = () => this.running && this.run === run;
    if (!current()) return;
    let end: (() => Promise<void>) | undefined;
    try {
      end = await this.options.store.listenForCommits!(
        () => this.wake(),
        (err) => {
          this.log.warn({ err: describeError(err) }, 'commit notifications lost; polling until they are back');
          if (this.stopListening === end) this.stopListening = undefined;
          void end?.().catch(() => undefined);
          this.retryListen(run);
        },
      );
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'cannot listen for commits; polling');
      this.retryListen(run);
      return;
    }
    if (current()) this.stopListening = end;
    else await end().catch(() => undefined); // stopped while subscribing: stop() found nothing to end
  }

  /** One retry at a time, and none once its run has been stopped. */
  private retryListen(run: number): void {
    if (!this.running || this.run !== run || this.listenRetry) return;
    this.listenRetry = setTimeout(() => {
      this.listenRetry = undefined;
      void this.listen(run);
    }, this.options.pollIntervalMs).unref();
  }
}

/** Resolves false after `ms`, without keeping the process alive. */
function later(ms: number): Promise<false> {
  return new Promise((r) => setTimeout(() => r(false), ms).unref());
}

/** Whether `work` ends before `limit` does; if it fails first, that failure. One that comes later is ignored. */
function endsBefore(work: Promise<unknown>, limit: Promise<false>): Promise<boolean> {
  return Promise.race([work.then(() => true), limit]);
}
