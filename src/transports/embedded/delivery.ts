import type { WireMessage } from '../../core/wire.js';
import type { Delivery } from '../../ports/transport.js';
import type { LogRow } from './log-store.js';
import type { TopicCursor } from './topic-cursor.js';

/** A delivery from the embedded log; adds where in the log the message sits. */
export interface EmbeddedDelivery extends Delivery {
  /** Global position of the message in the log (1, 2, 3... across all topics). */
  readonly offset: number;
  readonly group: string;
}

/** A row read for a subscription, with the cursor it was read through. */
export interface LogEntry {
  readonly cursor: TopicCursor;
  readonly row: LogRow;
}

/** What a subscription does when a delivery is settled. */
export interface DeliverySettler {
  ack(entry: LogEntry): Promise<void>;
  retry(entry: LogEntry): void;
}

/** One handed-out row. Settling twice is a no-op: the first ack or retry wins. */
export class LogDelivery implements EmbeddedDelivery {
  private settledAs: 'ack' | 'retry' | undefined;

  constructor(
    private readonly entry: LogEntry,
    readonly group: string,
    readonly redeliveries: number,
    private readonly settler: DeliverySettler,
  ) {}

  get message(): WireMessage {
    return this.entry.row.message;
  }

  get topic(): string {
    return this.entry.row.topic;
  }

  get offset(): number {
    return this.entry.row.offset;
  }

  get settled(): boolean {
    return this.settledAs !== undefined;
  }

  /** Marks the offset done; resolves once the checkpoint write that follows has run. */
  ack(): Promise<void> {
    if (this.settledAs) return Promise.resolve();
    this.settledAs = 'ack';
    return this.settler.ack(this.entry);
  }

  /** Puts the message back at the end of this subscription's queue; later offsets keep flowing. */
  retry(): Promise<void> {
    if (!this.settledAs) {
      this.settledAs = 'retry';
      this.settler.retry(this.entry);
    }
    return Promise.resolve();
  }
}
