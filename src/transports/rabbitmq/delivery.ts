import type { WireMessage } from '../../core/wire.js';
import type { Delivery } from '../../ports/transport.js';
import type { AmqpChannel, AmqpMessage } from './driver.js';
import { fromAmqpMessage, redeliveriesOf } from './wire-mapping.js';

/** Whether the channel a delivery came on is still open. */
export interface ChannelLiveness {
  open: boolean;
}

/**
 * A message received on one channel. Settling is idempotent, and a no-op once that channel has
 * closed: delivery tags are per channel, and the broker redelivers the unsettled message anyway.
 */
export class AmqpDelivery implements Delivery {
  readonly message: WireMessage;
  readonly topic: string;
  readonly redeliveries: number;
  private done = false;

  constructor(
    private readonly channel: AmqpChannel,
    private readonly liveness: ChannelLiveness,
    private readonly raw: AmqpMessage,
  ) {
    this.message = fromAmqpMessage(raw);
    this.topic = raw.fields.routingKey;
    this.redeliveries = redeliveriesOf(raw);
  }

  get settled(): boolean {
    return this.done;
  }

  ack(): Promise<void> {
    this.settle(() => this.channel.ack(this.raw));
    return Promise.resolve();
  }

  /** Requeues the message; a quorum queue counts it and dead-letters it at its delivery limit. */
  retry(): Promise<void> {
    this.settle(() => this.channel.nack(this.raw, false, true));
    return Promise.resolve();
  }

  private settle(send: () => void): void {
    if (this.done) return;
    this.done = true;
    if (!this.liveness.open) return;
    try {
      send();
    } catch {
      // The channel started closing after the check above; the broker will redeliver.
    }
  }
}
