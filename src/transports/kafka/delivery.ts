import type { WireMessage } from '../../core/wire.js';
import type { Delivery } from '../../ports/transport.js';
import type { PartitionCursor } from './partition-cursor.js';

/** A record read for a subscription, with the cursor of its partition. */
export interface PartitionEntry {
  readonly cursor: PartitionCursor;
  readonly offset: bigint;
  readonly topic: string;
  readonly message: WireMessage;
}

/** What a subscription does when a delivery is settled. */
export interface DeliverySettler {
  ack(entry: PartitionEntry): Promise<void>;
  retry(entry: PartitionEntry): void;
}

/** A delivery from a Kafka partition. Settling twice is a no-op: the first ack or retry wins. */
export class KafkaDelivery implements Delivery {
  private settledAs: 'ack' | 'retry' | undefined;

  constructor(
    private readonly entry: PartitionEntry,
    readonly redeliveries: number,
    private readonly settler: DeliverySettler,
  ) {}

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

  get settled(): boolean {
    return this.settledAs !== undefined;
  }

  /** Marks the offset done; resolves once the offset commit that follows has been answered. */
  ack(): Promise<void> {
    if (this.settledAs) return Promise.resolve();
    this.settledAs = 'ack';
    return this.settler.ack(this.entry);
  }

  /** Hands the record back to this subscription's queue; later offsets keep flowing meanwhile. */
  retry(): Promise<void> {
    if (!this.settledAs) {
      this.settledAs = 'retry';
      this.settler.retry(this.entry);
    }
    return Promise.resolve();
  }
}
