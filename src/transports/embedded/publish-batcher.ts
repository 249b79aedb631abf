import { PublishError } from '../../core/errors.js';
import type { OutgoingMessage } from '../../ports/transport.js';

interface PendingPublish {
  readonly out: OutgoingMessage;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Group commit: publishes arriving in the same event-loop turn are written by one transaction, and
 * each promise settles only after that transaction commits (or fails).
 */
export class PublishBatcher {
  private queue: PendingPublish[] = [];
  private scheduled = false;

  constructor(
    /** Writes and commits the batch synchronously; throws when nothing was committed. */
    private readonly commit: (batch: readonly OutgoingMessage[]) => void,
    private readonly maxBatchSize: number,
  ) {}

  enqueue(out: OutgoingMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ out, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushScheduled);
      }
    });
  }

  /** Commits everything queued now (used by close). */
  flushAll(): void {
    while (this.queue.length > 0) this.flushOne();
  }

  private readonly flushScheduled = (): void => {
    this.scheduled = false;
    this.flushOne();
    // Bigger backlogs go in several transactions, letting the event loop run in between.
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(this.flushScheduled);
    }
  };

  private flushOne(): void {
    const batch = this.queue.splice(0, this.maxBatchSize);
    if (batch.length === 0) return;
    try {
      this.commit(batch.map((p) => p.out));
    } catch (err) {
      const error =
        err instanceof PublishError
          ? err
          : new PublishError('SURETY_PUBLISH_NACKED', 'the log did not commit the publish', { cause: err });
      for (const p of batch) p.reject(error);
      return;
    }
    for (const p of batch) p.resolve();
  }
}
