import type { WireMessage } from '../../core/wire.js';
import type { Delivery } from '../../ports/transport.js';
import { SettleOnce, type DeliverySettler as Settler } from '../settle-once.js';
import type { PartitionCursor } from './partition-cursor.js';

/** A record read for a subscription, with the cursor of its partition. */
export interface PartitionEntry {
  readonly cursor: PartitionCursor;
  readonly offset: bigint;
  readonly topic: string;
  readonly message: WireMessage;
}

/** What a subscription does when a delivery is settled. */
export type DeliverySettler = Settler<PartitionEntry>;

/** A delivery from a Kafka partition. Settling twice is a no-op: the first ack or retry wins. */
export class KafkaDelivery extends SettleOnce<PartitionEntry> implements Delivery {
  constructor(
    entry: PartitionEntry,
    readonly redeliveries: number,
    settler: DeliverySettler,
  ) {
    super(entry, settler);
  }

  get message(): WireMessage {
    return this.entry.message;
  }

  get topic(): string {
    return this.entry.topic;
  }

  get partition(): number {
    return this.entry.cursor.partition;
  }

  get offset(): bigint {
    return this.entry.offset;
  }
}
