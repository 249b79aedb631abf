import type { WireMessage } from '../../core/wire.js';
import type { Delivery } from '../../ports/transport.js';
import { SettleOnce, type DeliverySettler as Settler } from '../settle-once.js';
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
export type DeliverySettler = Settler<LogEntry>;

/** One handed-out row. Settling twice is a no-op: the first ack or retry wins. */
export class LogDelivery extends SettleOnce<LogEntry> implements EmbeddedDelivery {
  constructor(
    entry: LogEntry,
    readonly group: string,
    readonly redeliveries: number,
    settler: DeliverySettler,
  ) {
    super(entry, settler);
  }

  get message(): WireMessage {
    return this.entry.row.message;
  }

  get topic(): string {
    return this.entry.row.topic;
  }

  get offset(): number {
    return this.entry.row.offset;
  }
}
