import type { WireMessage } from '../../core/wire.js';
import type { Delivery, DeliveryExhausted } from '../../ports/transport.js';
import type { Received } from './pending-entries.js';
import { fromStreamEntry } from './wire-mapping.js';

/** What settling a delivery does; the subscription implements it. */
export interface Settler {
  ack(delivery: StreamDelivery): Promise<void>;
  retry(delivery: StreamDelivery): void;
}

/**
 * One stream entry handed to a handler. `redeliveries` is Redis' delivery count minus one; past
 * `maxDeliveries` the delivery is `exhausted`, for the consumer to record as a dead letter. Settling
 * is idempotent.
 */
export class StreamDelivery implements Delivery {
  readonly message: WireMessage;
  readonly redeliveries: number;
  readonly exhausted?: DeliveryExhausted;
  private done = false;

  constructor(
    readonly received: Received,
    readonly topic: string,
    maxDeliveries: number | null,
    private readonly settler: Settler,
  ) {
    const { entry, deliveries } = received;
    this.message = fromStreamEntry(entry.stream, entry.id, entry.fields);
    this.redeliveries = Math.max(0, deliveries - 1);
    if (maxDeliveries !== null && deliveries > maxDeliveries) {
      this.exhausted = { reason: 'max_deliveries', deliveries: deliveries - 1 };
    }
  }

  get settled(): boolean {
    return this.done;
  }

  /** XACK, batched with the other acks of this turn; resolves once Redis answered. */
  ack(): Promise<void> {
    if (this.done) return Promise.resolve();
    this.done = true;
    return this.settler.ack(this);
  }

  /** Stays pending, and is claimed back and delivered again after `retryDelayMs`. */
  retry(): Promise<void> {
    if (this.done) return Promise.resolve();
    this.done = true;
    this.settler.retry(this);
    return Promise.resolve();
  }
}
