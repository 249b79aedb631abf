import { PublishError } from '../../core/errors.js';
import type { OutgoingMessage } from '../../ports/transport.js';
import type { KafkaProducer, KafkaRecordOut } from './driver.js';
import type { ResolvedKafkaOptions } from './options.js';
import { publishErrorOf } from './publish-refusal.js';
import { toRecord } from './wire-mapping.js';

interface Pending {
  readonly record: KafkaRecordOut;
  readonly resolve: () => void;
  readonly reject: (err: PublishError) => void;
  readonly timer: NodeJS.Timeout;
  settled: boolean;
}

/**
 * Publishes through one idempotent producer with acks=all. A publish resolves when the produce
 * request holding it is acknowledged by the partition leader after every in-sync replica has it,
 * never when it is only buffered. Publishes are coalesced: one produce request is in flight at a
 * time, with everything that queued up meanwhile (up to `maxBatch`), because the client sends up to
 * five requests per connection without waiting, and an idempotent producer's sequence numbers then
 * arrive out of order (OUT_OF_ORDER_SEQUENCE_NUMBER) under load.
 */
export class BatchingPublisher {
  private queue: Pending[] = [];
  private inFlight = false;
  private closed = false;
  private drained: (() => void) | undefined;

  constructor(
    private readonly producer: KafkaProducer,
    private readonly options: ResolvedKafkaOptions,
    /** Resolves once the topology exists; publishes wait for it. */
    private readonly prepared: () => Promise<void>,
    private readonly onOutcome: (ok: boolean, err?: PublishError) => void,
  ) {}

  publish(out: OutgoingMessage): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    const record = toRecord(this.options.topicName(out.topic), out.message);
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        record,
        resolve,
        reject,
        settled: false,
        timer: setTimeout(() => {
          this.settle(
            pending,
            new PublishError(
              'SURETY_PUBLISH_TIMEOUT',
              `Kafka did not acknowledge within ${this.options.publishTimeoutMs} ms`,
            ),
          );
          this.queue = this.queue.filter((p) => p !== pending);
        }, this.options.publishTimeoutMs),
      };
      this.queue.push(pending);
      this.flush();
    });
  }

  /** Stops accepting publishes and waits (up to closeTimeoutMs) for the request in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight || this.queue.length > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, this.options.closeTimeoutMs).unref();
      });
    }
    for (const pending of this.queue.splice(0)) this.settle(pending, closedError());
  }

  private flush(): void {
    if (this.inFlight || this.queue.length === 0) {
      if (!this.inFlight && this.queue.length === 0) this.drained?.();
      return;
    }
    this.inFlight = true;
    const batch = this.queue.splice(0, batchLength(this.queue, this.options.maxBatch));
    void this.send(batch).finally(() => {
      this.inFlight = false;
      this.flush();
    });
  }

  private async send(batch: Pending[]): Promise<void> {
    const live = batch.filter((p) => !p.settled);
    if (live.length === 0) return;
    try {
      await this.prepared();
      await this.producer.send({ messages: live.map((p) => p.record) });
      this.onOutcome(true);
      for (const pending of live) this.settle(pending);
    } catch (err) {
      const error = publishErrorOf(err, [...new Set(live.map((p) => p.record.topic))].join(', '));
      // A refusal of one record (too large, unknown topic) fails the whole request: send each
      // alone, so that only the refused one fails, never its neighbours.
      if (error.code === 'SURETY_PUBLISH_UNROUTABLE' && live.length > 1) {
        for (const pending of live) await this.send([pending]);
        return;
      }
      this.onOutcome(false, error);
      for (const pending of live) this.settle(pending, error);
    }
  }

  private settle(pending: Pending, err?: PublishError): void {
    if (pending.settled) return;
    pending.settled = true;
    clearTimeout(pending.timer);
    if (err) pending.reject(err);
    else pending.resolve();
  }
}

/** Bytes of record values in one produce request, well below the broker's 1 MiB default per batch. */
const MAX_BATCH_BYTES = 512 * 1024;

/** How many queued records go into the next request: at least one, at most `maxBatch` and MAX_BATCH_BYTES. */
function batchLength(queue: readonly Pending[], maxBatch: number): number {
  let bytes = 0;
  let n = 0;
  while (n < queue.length && n < maxBatch) {
    bytes += queue[n]!.record.value.length;
    if (n > 0 && bytes > MAX_BATCH_BYTES) break;
    n++;
  }
  return n;
}

function closedError(): PublishError {
  return new PublishError('SURETY_TRANSPORT_CLOSED', 'the Kafka transport is closed');
}
