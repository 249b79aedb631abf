import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { OutboxRelayStore } from '../ports/outbox-store.js';
import type { Outbox } from './outbox.js';
import { Signal } from './signal.js';

/**
 * What wakes the relay's claim loop before its poll: commits of an outbox in this process, and
 * PostgreSQL NOTIFY from others, listened for again after the poll interval whenever it is lost.
 */
export class RelayWakeUps {
  /** Fired on every hint; the loop waits on it with the poll interval as timeout. */
  readonly signal = new Signal();
  /** Which start() a listen belongs to: one left over from an earlier run ends itself. */
  private run = 0;
  private active = false;
  private retry: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: Pick<OutboxRelayStore, 'listenForCommits'>,
    private readonly options: { readonly listen: boolean; readonly pollIntervalMs: number; readonly outbox?: Outbox },
    private readonly log: Logger,
  ) {}

  wake(): void {
    this.signal.fire();
  }

  /** Subscribes to the outbox at once, and resolves once the first LISTEN succeeded or failed. */
  async start(): Promise<void> {
    const run = ++this.run;
    this.active = true;
    this.unsubscribe = this.options.outbox?.onCommitted(() => this.wake());
    if (this.options.listen && this.store.listenForCommits) await this.listen(run);
  }

  /** Stops hearing the outbox at once; resolves once the LISTEN connection was let go. */
  async stop(): Promise<void> {
    this.active = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.retry);
    this.retry = undefined;
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    await unlisten?.().catch(() => undefined);
  }

  private async listen(run: number): Promise<void> {
    const current = () => this.active && this.run === run;
    if (!current()) return;
    let end: (() => Promise<void>) | undefined;
    try {
      end = await this.store.listenForCommits!(
        () => this.wake(),
        (err) => {
          this.log.warn({ err: describeError(err) }, 'commit notifications lost; polling until they are back');
          if (this.unlisten === end) this.unlisten = undefined;
          void end?.().catch(() => undefined);
          this.retryListen(run);
        },
      );
    } catch (err) {
      this.log.warn({ err: describeError(err) }, 'cannot listen for commits; polling');
      this.retryListen(run);
      return;
    }
    if (current()) this.unlisten = end;
    else await end().catch(() => undefined); // stopped while subscribing: stop() found nothing to end
  }

  /** One retry at a time, and none once its run has been stopped. */
  private retryListen(run: number): void {
    if (!this.active || this.run !== run || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.listen(run);
    }, this.options.pollIntervalMs).unref();
  }
}
