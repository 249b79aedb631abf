import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Delivery } from '../ports/transport.js';
import type { Outcome } from './batch-processor.js';
import { ConsumerStoreUnavailableError } from './errors.js';

export interface Pending {
  readonly delivery: Delivery;
  readonly settled: () => void;
}

export interface LaneSettings {
  readonly batchSize: number;
  readonly batchWindowMs: number;
  readonly unavailableBackoffMs: readonly number[];
  readonly logger: Logger;
}

/**
 * One serial pipeline of batches: deliveries queue up, a batch is handled when it is full or its
 * window passes, and the next batch waits for the previous one. Lanes run side by side; a key always
 * maps to the same lane when per-key serial handling is on.
 */
export class Lane {
  private queue: Pending[] = [];
  private draining: Promise<void> | undefined;
  private cancelWindow: (() => void) | undefined;
  stopping = false;

  constructor(
    private readonly settings: LaneSettings,
    private readonly process: (batch: readonly Pending[]) => Promise<Outcome[]>,
    private readonly settle: (p: Pending, outcome: Outcome) => Promise<void>,
  ) {}

  push(p: Pending): void {
    this.queue.push(p);
    if (this.queue.length >= this.settings.batchSize) this.kick();
    // While a batch runs, what arrives waits for it anyway and goes next (the drain's end kicks).
    else if (this.draining === undefined) this.cancelWindow ??= this.armWindow();
  }

  /** Window 0 still gathers the deliveries of the current I/O turn (one socket read) into the batch. */
  private armWindow(): () => void {
    const ms = this.settings.batchWindowMs;
    if (ms > 0) {
      const timer = setTimeout(() => this.kick(), ms);
      return () => clearTimeout(timer);
    }
    const immediate = setImmediate(() => this.kick());
    return () => clearImmediate(immediate);
  }

  /** Resolves when the batch in hand (and anything queued) is settled. */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private kick(): void {
    this.cancelWindow?.();
    this.cancelWindow = undefined;
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    let unavailable = 0;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.settings.batchSize);
      let outcomes: Outcome[];
      try {
        outcomes = await this.process(batch);
        unavailable = 0;
      } catch (err) {
        if (!(err instanceof ConsumerStoreUnavailableError)) throw err;
        if (this.stopping) {
          // Shutting down with the database away: let go unacked; the broker redelivers them.
          for (const p of this.queue.splice(0)) p.settled();
          return;
        }
        // Nothing was committed, so nothing is acked. Keep the batch and wait: no spin, no loss.
        const delays = this.settings.unavailableBackoffMs;
        const delay = delays[Math.min(unavailable++, delays.length - 1)]!;
        this.settings.logger.warn(
          { err: describeError(err.cause), retryInMs: delay, batch: batch.length },
          'consumer database unavailable',
        );
        await new Promise((r) => setTimeout(r, delay));
        continue;
      }
      this.queue.splice(0, batch.length);
      await Promise.all(batch.map((p, i) => this.settle(p, outcomes[i]!)));
    }
  }
}
