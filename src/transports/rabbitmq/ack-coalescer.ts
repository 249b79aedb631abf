import type { AmqpChannel, AmqpMessage } from './driver.js';

/**
 * The acks of one consumer channel, sent once per turn of the event loop: the longest run of acked
 * deliveries at the head of the unsettled ones goes out as ONE ack with `multiple` (a batch of 100
 * is one frame, not 100); an acked delivery behind one still being handled is acked alone, so that
 * nothing is ever acked before its handler settled it. Delivery tags rise in arrival order on a
 * channel, which is what lets `multiple` stand for "everything up to this tag".
 */
export class AckCoalescer {
  /** Unsettled delivery tags, in arrival (and so tag) order. */
  private unsettled: number[] = [];
  private readonly acked = new Set<number>();
  private scheduled = false;
  /** False once the channel closed: its delivery tags mean nothing any more. */
  private open = true;

  constructor(private readonly channel: AmqpChannel) {
    channel.on('close', () => (this.open = false));
  }

  received(message: AmqpMessage): void {
    this.unsettled.push(message.fields.deliveryTag);
  }

  ack(message: AmqpMessage): void {
    this.acked.add(message.fields.deliveryTag);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Requeues one delivery at once (nack); it leaves the unsettled run. */
  requeue(message: AmqpMessage): void {
    const tag = message.fields.deliveryTag;
    this.unsettled = this.unsettled.filter((t) => t !== tag);
    if (this.open) this.channel.nack(message, false, true); // throws if the channel is closing: see AmqpDelivery
  }

  /** Sends the acks collected so far. A closed channel drops them: the broker redelivers those messages. */
  flush(): void {
    this.scheduled = false;
    if (this.acked.size === 0) return;
    if (!this.open) {
      this.acked.clear();
      this.unsettled = [];
      return;
    }
    let head = 0;
    while (head < this.unsettled.length && this.acked.has(this.unsettled[head]!)) head++;
    const rest: number[] = [];
    try {
      if (head > 0) this.channel.ack(tagged(this.unsettled[head - 1]!), head > 1);
      for (const tag of this.unsettled.slice(head)) {
        if (this.acked.has(tag)) this.channel.ack(tagged(tag));
        else rest.push(tag);
      }
    } catch {
      // The channel is closing: the broker redelivers whatever was not acked.
      this.open = false;
    }
    this.unsettled = rest;
    this.acked.clear();
  }
}

/** The part of a message amqplib's ack reads. */
const tagged = (deliveryTag: number) => ({ fields: { deliveryTag } }) as AmqpMessage;
