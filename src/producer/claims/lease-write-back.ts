import { describeError } from '../../core/errors.js';
import type { OutboxRelayStore, OutboxRow } from '../../ports/outbox-store.js';
import type { Logger } from '../../core/logger.js';
import type { RelayFailures } from '../relay-failures.js';
import type { ResolvedRelayOptions } from '../relay-options.js';

interface Failure {
  readonly row: OutboxRow;
  readonly error: unknown;
}

/**
 * Lease mode's write-back: publish outcomes queue up as the broker decides, and one pass at a time
 * writes them: confirmed rows marked sent in batches (the confirms of one tick together), failures
 * rescheduled or dead. A mark that fails is kept and retried: a confirmed row must not be published
 * again just because the database blinked.
 */
export class LeaseWriteBack {
  private readonly toMark: number[] = [];
  private readonly toRecord: Failure[] = [];
  private settling: Promise<void> | undefined;
  private scheduled = false;

  constructor(
    private readonly store: Pick<OutboxRelayStore, 'markSent' | 'recordFailure'>,
    private readonly o: ResolvedRelayOptions,
    private readonly failures: RelayFailures,
    private readonly log: Logger,
    /** `wake`: claim again (ordered mode: a key's next row may be due); `givenUp`: stopped with nothing in flight. */
    private readonly relay: { wake(): void; givenUp(): boolean },
  ) {}

  confirmed(seq: number): void {
    this.toMark.push(seq);
    this.schedule();
  }

  failed(row: OutboxRow, error: unknown): void {
    this.toRecord.push({ row, error });
    this.schedule();
  }

  /** Single flight: every caller waits for the one pass that drains all outcomes, including late ones. */
  settle(): Promise<void> {
    this.settling ??= this.drain().finally(() => (this.settling = undefined));
    return this.settling;
  }

  /** Coalesces the outcomes of one tick into one pass. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.settle();
    });
  }

  private async drain(): Promise<void> {
    const o = this.o;
    while (this.toMark.length > 0 || this.toRecord.length > 0) {
      if (this.toMark.length > 0) {
        const batch = this.toMark.splice(0, o.markSentBatchSize);
        try {
          await this.store.markSent(batch, o.clock.now());
          if (o.ordered) this.relay.wake(); // the next row of each key may now be claimable
        } catch (err) {
          this.toMark.unshift(...batch);
          this.log.error({ err: describeError(err), rows: batch.length }, 'marking rows sent failed; retrying');
          // A plain pause: waiting on the relay's wake signal would swallow wake-ups meant for its claim loop.
          await new Promise((r) => setTimeout(r, o.backoff.delayMs(1)));
          if (this.relay.givenUp()) break;
          continue;
        }
      }
      const failure = this.toRecord.shift();
      if (failure) await this.record(failure);
    }
  }

  private async record({ row, error }: Failure): Promise<void> {
    const update = this.failures.update(row, error);
    try {
      const recorded = await this.store.recordFailure(update);
      if (!recorded) return; // our lease expired and another relay owns the row now
    } catch (err) {
      this.log.error(
        { err: describeError(err), messageId: row.messageId },
        'recording a failed publish failed; the lease will expire',
      );
      return;
    }
    await this.failures.report(row, update, error);
  }
}
