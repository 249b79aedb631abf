import type { Clock } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import { PeriodicPurge } from '../core/periodic-purge.js';
import type { Logger } from '../core/logger.js';
import type { ConsumerStore } from '../ports/store.js';

export interface ConsumerRetentionOptions {
  /**
   * Inbox rows older than this are deleted; 0 keeps them. A message redelivered, replayed or resent
   * after the window runs its handler again.
   */
  readonly inboxWindowMs: number;
  /** Resolved and ignored dead letters unchanged this long are deleted with their history; 0 keeps them. */
  readonly settledDeadLettersMs: number;
  readonly intervalMs: number;
  /** Rows per delete; a pass repeats batches until one comes back short. */
  readonly batchSize: number;
}

/** Rows one pass deleted. */
export interface RetentionPass {
  readonly inbox: number;
  readonly settledDeadLetters: number;
}

/**
 * Purges old inbox rows and settled dead letters in bounded batches, yielding between batches. The
 * tables are shared by every group on the store, so the shortest window among its consumers applies.
 * Pending, replaying and dead dead letters are never purged.
 * @example
 * const retention = new ConsumerRetention(store, systemClock, {
 *   inboxWindowMs: 7 * 86_400_000, settledDeadLettersMs: 30 * 86_400_000, intervalMs: 60_000, batchSize: 1_000,
 * }, logger);
 * retention.start(); // Consumer.start() does this from its `retention` option
 */
export class ConsumerRetention {
  private readonly loop: PeriodicPurge;

  constructor(
    private readonly store: Pick<ConsumerStore, 'inbox' | 'deadLetters'>,
    private readonly clock: Clock,
    private readonly options: ConsumerRetentionOptions,
    private readonly log: Logger,
  ) {
    this.loop = new PeriodicPurge(
      options.intervalMs,
      () => this.runOnce(),
      (err) => this.log.warn({ err: describeError(err) }, 'consumer retention failed; will retry'),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass over the inbox, then the settled dead letters. */
  async runOnce(): Promise<RetentionPass> {
    const { inboxWindowMs, settledDeadLettersMs, batchSize } = this.options;
    const now = this.clock.now();
    const inbox =
      inboxWindowMs > 0
        ? await this.loop.drain((n) => this.store.inbox.purgeInbox(now - inboxWindowMs, n), batchSize)
        : 0;
    const settledDeadLetters =
      settledDeadLettersMs > 0
        ? await this.loop.drain(
            (n) => this.store.deadLetters.purgeSettledDeadLetters(now - settledDeadLettersMs, n),
            batchSize,
          )
        : 0;
    if (inbox + settledDeadLetters > 0) this.log.info({ inbox, settledDeadLetters }, 'purged old consumer rows');
    return { inbox, settledDeadLetters };
  }
}
