import type { Clock } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { InboxStore } from '../ports/consumer-store.js';

export interface InboxRetentionOptions {
  /** Inbox rows older than this are deleted. A message redelivered, replayed or resent after the window runs its handler again. */
  readonly windowMs: number;
  readonly intervalMs: number;
  readonly batchSize: number;
}

/** Purges old inbox rows in bounded batches, yielding between batches. */
export class InboxRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly store: InboxStore,
    private readonly clock: Clock,
    private readonly options: InboxRetentionOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.runOnce()
        .catch((err) => this.log.warn({ err: describeError(err) }, 'inbox retention failed; will retry'))
        .finally(() => (this.running = undefined));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; returns the number of rows deleted. */
  async runOnce(): Promise<number> {
    const before = this.clock.now() - this.options.windowMs;
    let total = 0;
    for (;;) {
      const n = await this.store.purgeInbox(before, this.options.batchSize);
      total += n;
      if (n < this.options.batchSize) return total;
      await new Promise((r) => setImmediate(r));
    }
  }
}
