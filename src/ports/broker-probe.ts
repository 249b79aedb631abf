/**
 * Read-only view of a broker's queues, for diagnostics. A probe never creates, changes or consumes
 * anything: it asks the broker what it holds. Figures the broker cannot tell are null.
 */
export interface QueueState {
  readonly name: string;
  /** False when the broker has no such queue (the counts are then 0). */
  readonly exists: boolean;
  /** Messages waiting for a consumer. */
  readonly ready: number;
  /** Delivered, not yet acknowledged; null when only a passive declare was possible. */
  readonly unacked: number | null;
  readonly consumers: number;
  /** Null when the broker would not say (e.g. an exclusive queue of another connection). */
  readonly durable: boolean | null;
  /** `classic`, `quorum`, `stream`, `log` (the embedded log), `jetstream`, or null when unknown. */
  readonly type: string | null;
  /** The queue's `x-` arguments as far as they could be learnt, or null. */
  readonly arguments: Readonly<Record<string, unknown>> | null;
  /**
   * Deliveries after which the broker gives up on a message: the queue's own setting, a policy's,
   * or the broker's default (RabbitMQ 4 quorum queues: 20); null when it never does. Absent when
   * the probe cannot tell.
   */
  readonly deliveryLimit?: number | null;
  /**
   * Where the broker sends a message it gives up on: a dead-letter exchange, and the parking queue
   * the consumers drain into their dead-letter table when it is Surety's. Null: the message is
   * dropped. Absent when the probe cannot tell.
   */
  readonly deadLetters?: { readonly exchange: string; readonly parkingQueue: string | null } | null;
  /**
   * Risks the probe saw that its figures alone do not show, one sentence each (e.g. Redis trimming
   * entries a group has not acked). The doctor reports each as a warning. Absent: none known.
   */
  readonly warnings?: readonly string[];
  /** Where the figures came from. */
  readonly source: 'amqp' | 'management' | 'log' | 'jetstream' | 'redis';
}

export interface BrokerProbe {
  /** Broker name for messages, e.g. `rabbitmq`. */
  readonly broker: string;
  /** Where the broker is, without credentials (for messages). */
  readonly address: string;
  /** One queue's state. Rejects when the broker cannot be reached. */
  inspect(queue: string): Promise<QueueState>;
  /**
   * Queues the broker itself knows, for brokers that can enumerate them; absent on a probe that
   * cannot (RabbitMQ over AMQP alone). The doctor checks these when no queue is configured.
   * Rejects when the broker cannot be reached.
   * @example
   * const names = (await probe.listQueues?.()) ?? []; // e.g. ['orders.created@billing']
   */
  listQueues?(): Promise<string[]>;
  close(): Promise<void>;
}
