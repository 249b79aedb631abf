import type { Delivery, SubscribeOptions, Subscriber, Subscription } from '../../ports/transport.js';
import type { Envelope } from '../../core/envelope.js';
import { decodeEnvelope } from '../../core/wire.js';

/** Which deliveries a fault applies to: all (no matcher), or those whose envelope it accepts. */
export type DeliveryMatcher = (
  envelope: Envelope,
  delivery: { readonly topic: string; readonly group: string },
) => boolean;

/**
 * The consumers' subscriber: the embedded log's, counting deliveries in hand for settled(), and
 * able to hand a delivery over twice, as a broker does when the first ack was lost.
 */
export class FaultySubscriber implements Subscriber {
  private inHandCount = 0;
  private twice: (DeliveryMatcher | undefined)[] = [];

  constructor(
    private readonly inner: Subscriber,
    private readonly changed: () => void,
  ) {}

  get inHand(): number {
    return this.inHandCount;
  }

  /** The next delivery `matcher` accepts (any, without one) comes twice. */
  deliverTwice(matcher?: DeliveryMatcher): void {
    this.twice.push(matcher);
  }

  subscribe(options: SubscribeOptions, handler: (delivery: Delivery) => Promise<void>): Promise<Subscription> {
    return this.inner.subscribe(options, async (delivery) => {
      this.inHandCount++;
      try {
        if (!this.takeTwice(delivery, options.group)) return await handler(this.acking(delivery));
        // The first ack is lost on its way to the broker, which then delivers the message again.
        await handler({ ...this.view(delivery), ack: () => Promise.resolve() });
        await handler({ ...this.acking(delivery), redeliveries: delivery.redeliveries + 1 });
      } finally {
        this.inHandCount--;
        this.changed();
      }
    });
  }

  private takeTwice(delivery: Delivery, group: string): boolean {
    if (this.twice.length === 0) return false;
    const index = this.twice.findIndex((m) => m === undefined || matches(m, delivery, group));
    if (index < 0) return false;
    this.twice.splice(index, 1);
    return true;
  }

  private view(delivery: Delivery): Delivery {
    return {
      message: delivery.message,
      topic: delivery.topic,
      redeliveries: delivery.redeliveries,
      ...(delivery.exhausted ? { exhausted: delivery.exhausted } : {}),
      ack: () => delivery.ack(),
      retry: () => delivery.retry(),
    };
  }

  /** The delivery, reporting its ack (the checkpoint written) as a change. */
  private acking(delivery: Delivery): Delivery {
    return {
      ...this.view(delivery),
      ack: () => delivery.ack().finally(this.changed),
      retry: () => delivery.retry().finally(this.changed),
    };
  }
}

function matches(matcher: DeliveryMatcher, delivery: Delivery, group: string): boolean {
  try {
    return matcher(decodeEnvelope(delivery.message), { topic: delivery.topic, group });
  } catch {
    return false; // an undecodable message matches no envelope test
  }
}
