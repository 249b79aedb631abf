import type { WireMessage } from '../../core/wire.js';
import type { Delivery, DeliveryExhausted } from '../../ports/transport.js';
import type { AckCoalescer } from './ack-coalescer.js';
import { parkedDelivery } from './dead-letter-parking.js';
import type { AmqpMessage } from './driver.js';
import { fromAmqpMessage, redeliveriesOf } from './wire-mapping.js';

/**
 * A message received on one channel. Settling is idempotent, and a no-op once that channel has
 * closed: delivery tags are per channel, and the broker redelivers the unsettled message anyway.
 * `parked` is set for a delivery from a queue's parking queue: the broker gave up on it there.
 */
export class AmqpDelivery implements Delivery {
  readonly message: WireMessage;
  readonly topic: string;
  readonly redeliveries: number;
  readonly exhausted?: DeliveryExhausted;
  private done = false;

  constructor(
    private readonly acks: AckCoalescer,
    private readonly raw: AmqpMessage,
    parked?: { readonly source: string; readonly deliveryLimit: number | null },
  ) {
    this.message = fromAmqpMessage(raw);
    this.topic = raw.fields.routingKey;
    this.redeliveries = redeliveriesOf(raw);
    if (parked) {
      const { exhausted, topic } = parkedDelivery(raw, parked.source, parked.deliveryLimit);
      this.exhausted = exhausted;
      this.topic = topic;
    }
  }

  get settled(): boolean {
    return this.done;
  }

  /** Acked with the other acks of this turn of the event loop (see AckCoalescer). */
  ack(): Promise<void> {
    this.settle(() => this.acks.ack(this.raw));
    return Promise.resolve();
  }

  /** Requeues the message; a quorum queue counts it and dead-letters it at its delivery limit. */
  retry(): Promise<void> {
    this.settle(() => this.acks.requeue(this.raw));
    return Promise.resolve();
  }

  private settle(send: () => void): void {
    if (this.done) return;
    this.done = true;
    try {
      send();
    } catch {
      // The channel is closing; the broker will redeliver.
    }
  }
}
