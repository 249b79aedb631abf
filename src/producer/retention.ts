import type { Clock } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import { PeriodicPurge } from '../core/periodic-purge.js';
import type { OutboxRelayStore } from '../ports/outbox-store.js';
import type { Logger } from '../core/logger.js';

export interface RetentionOptions {
  readonly sentMaxAgeMs: number;
  readonly intervalMs: number;
  readonly batchSize: number;
}

/**
 * Deletes sent rows older than `sentMaxAgeMs`, in bounded batches, by one relay at a time (a lease
 * row decides which). Batches yield between each other so claims are never starved.
 */
export class RetentionJob {
  private readonly loop: PeriodicPurge;

  constructor(
    private readonly store: OutboxRelayStore,
    private readonly owner: string,
    private readonly clock: Clock,
    private readonly options: RetentionOptions,
    private readonly log: Logger,
  ) {
    this.loop = new PeriodicPurge(
      options.intervalMs,
      () => this.runOnce(),
      (err) => this.log.warn({ err: describeError(err) }, 'outbox retention failed; will retry'),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One purge pass. Returns the number of rows deleted (0 when another relay holds the lease). */
  async runOnce(): Promise<number> {
    const { store, owner, clock, options } = this;
    const ttl = Math.max(options.intervalMs * 2, 30_000);
    const lease = () => store.acquireLease('outbox-retention', owner, clock.now(), ttl);
    if (!(await lease())) return 0;
    const before = clock.now() - options.sentMaxAgeMs;
    let batches = 0;
    // Renewed before every batch after the first: a long pass must not outlive its lease while it runs.
    const purge = async (n: number) => (batches++ === 0 || (await lease()) ? store.purgeSent(before, n) : 0);
    const total = await this.loop.drain(purge, options.batchSize);
    if (total > 0) this.log.info({ deleted: total }, 'purged sent outbox rows');
    return total;
  }
}
