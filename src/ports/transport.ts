import type { WireMessage } from '../core/wire.js';

/** A message on its way to a broker: where it goes and what it is. */
export interface OutgoingMessage {
  /** Topic, routing key, subject or stream, as the transport maps it. */
  readonly topic: string;
  readonly message: WireMessage;
}

/**
 * Publishing half of the transport port. `publish` resolves only once the broker has positively
 * confirmed this very message (persisted and routed). It rejects with a `PublishError` on a nack,
 * a return (unroutable), a timeout, or a lost connection. Never resolves on "buffered".
 */
export interface Publisher {
  publish(out: OutgoingMessage): Promise<void>;
  /** False while the transport knows it cannot publish (disconnected); relays pause instead of failing rows. */
  isReady(): boolean;
  /** Resolves when `isReady()` becomes true, or after `timeoutMs`. */
  waitUntilReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Why the broker gave up on a message before any consumer settled it. */
export interface DeliveryExhausted {
  /** The broker's word for it, e.g. `delivery_limit` (RabbitMQ). */
  readonly reason: string;
  /** How many times it was delivered before, when the broker's limit is known; else null. */
  readonly deliveries: number | null;
}

/** One received message. Exactly one of ack / retry must be called. */
export interface Delivery {
  readonly message: WireMessage;
  readonly topic: string;
  /** Times the broker has delivered this message before, when it knows (RabbitMQ quorum x-delivery-count). */
  readonly redeliveries: number;
  /**
   * Set when the broker gave up on the message (e.g. its delivery limit, after a consumer crash loop)
   * and handed it over to be recorded as a dead letter: consumers record it without running the
   * handler, then ack. Absent on brokers that never give up on a message.
   */
  readonly exhausted?: DeliveryExhausted;
  /**
   * Ack-style brokers ack the message. Checkpoint-style logs mark it done and commit the offset up
   * to the lowest message not yet done.
   */
  ack(): Promise<void>;
  /** Hand the message back to the broker for redelivery (the broker retry strategy). */
  retry(): Promise<void>;
}

export interface SubscribeOptions {
  /** Consumer group: one delivery per group. */
  readonly group: string;
  readonly topics: readonly string[];
  /** Maximum deliveries handed out and not yet settled. */
  readonly prefetch?: number;
}

export interface Subscription {
  /** Stop receiving, wait for in-flight handlers to settle. */
  close(): Promise<void>;
}

export interface Subscriber {
  subscribe(options: SubscribeOptions, handler: (delivery: Delivery) => Promise<void>): Promise<Subscription>;
}

/** How a transport settles consumption; consumers adapt their batching to it. */
export type SettlementStyle = 'ack' | 'checkpoint';

/** A broker adapter: publishes with confirmation, subscribes with explicit ack or checkpoint. */
export interface Transport extends Publisher, Subscriber {
  readonly name: string;
  readonly settlement: SettlementStyle;
}
