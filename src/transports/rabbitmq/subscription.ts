import type { Delivery, Subscription } from '../../ports/transport.js';
import { waitForHandlers } from '../running-handlers.js';
import { ChannelKeeper } from './channel-keeper.js';
import type { ConnectionManager } from './connection.js';
import { AckCoalescer } from './ack-coalescer.js';
import { AmqpDelivery } from './delivery.js';
import type { AmqpChannel, AmqpMessage } from './driver.js';
import type { RabbitMqRoute, ResolvedRabbitMqOptions } from './options.js';
import { declareQueues, type ResolvedQueue } from './topology.js';
import { runHandler } from '../run-handler.js';

/** One queue a subscription consumes, and the routes bound to it. */
export interface ConsumedQueue {
  readonly queue: string;
  readonly bindings: readonly RabbitMqRoute[];
  /** The queue to declare (quorum, durable, parked) because the topology does not; else undefined. */
  readonly declare: ResolvedQueue | undefined;
  /** Its parking queue, consumed too: what the broker gave up on, for the dead-letter table. */
  readonly parkingQueue: string | null;
  /** The delivery limit it was declared with, if Surety knows it. */
  readonly deliveryLimit: number | null;
}

interface ConsumerState {
  readonly consumerTags: string[];
  readonly acks: AckCoalescer;
}

/**
 * Consumes a group's queues on a channel of its own with manual ack, and re-establishes the
 * consumers on every reconnect.
 */
export class RabbitMqSubscription implements Subscription {
  private readonly keeper: ChannelKeeper<ConsumerState>;
  private readonly running = new Set<Promise<void>>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly manager: ConnectionManager,
    private readonly options: ResolvedRabbitMqOptions,
    private readonly queues: readonly ConsumedQueue[],
    private readonly prefetch: number,
    private readonly handler: (delivery: Delivery) => Promise<void>,
    private readonly onClosed: () => void,
  ) {
    this.keeper = new ChannelKeeper(manager, options, {
      label: `subscription ${queues.map((q) => q.queue).join(',')}`,
      create: (connection) => connection.createChannel(),
      setup: (channel) => this.setup(channel),
      opened: () => {},
      lost: () => options.logger.warn({ queues: this.queueNames() }, 'rabbitmq consumer channel lost; resubscribing'),
      beforeClose: (channel, state) => this.drain(channel, state),
    });
  }

  /**
   * Subscribes as soon as there is a connection, waiting for one up to `startTimeoutMs` (a
   * connection lost while subscribing is waited out the same way), then keeps it subscribed. The
   * broker refusing a declare, bind or consume (an AMQP reply code) rejects at once.
   */
  async start(): Promise<void> {
    const { startTimeoutMs } = this.options;
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      const connection = await this.manager.waitForConnection(Math.max(0, deadline - Date.now()));
      if (!connection) throw this.manager.notConnected(`could not subscribe to ${this.queueNames()}`, startTimeoutMs);
      try {
        await this.keeper.openNow();
        break;
      } catch (err) {
        const refused = typeof (err as { code?: unknown } | null)?.code === 'number';
        if (refused || this.manager.current === connection || Date.now() >= deadline) throw err;
      }
    }
    this.keeper.run();
  }

  close(): Promise<void> {
    this.closing ??= this.keeper.stop().finally(this.onClosed);
    return this.closing;
  }

  private async setup(channel: AmqpChannel): Promise<ConsumerState> {
    const state: ConsumerState = { consumerTags: [], acks: new AckCoalescer(channel) };
    await channel.prefetch(this.prefetch);
    for (const q of this.queues) {
      if (q.declare) await declareQueues(channel, [q.declare]);
      for (const b of q.bindings) await channel.bindQueue(q.queue, b.exchange, b.routingKey);
      await this.consume(channel, state, q.queue, undefined);
      if (q.parkingQueue !== null) await this.consume(channel, state, q.parkingQueue, q);
    }
    return state;
  }

  /** Consumes `queue`; `parkedFrom` is the queue whose parking queue it is. */
  private async consume(
    channel: AmqpChannel,
    state: ConsumerState,
    queue: string,
    parkedFrom: ConsumedQueue | undefined,
  ): Promise<void> {
    const { consumerTag } = await channel.consume(queue, (msg) => this.receive(channel, state, msg, parkedFrom), {
      noAck: false,
    });
    state.consumerTags.push(consumerTag);
  }

  private receive(
    channel: AmqpChannel,
    state: ConsumerState,
    msg: AmqpMessage | null,
    parkedFrom: ConsumedQueue | undefined,
  ): void {
    if (msg === null) {
      // The broker cancelled the consumer (queue deleted); a fresh channel redeclares and resubscribes.
      this.options.logger.warn({ queues: this.queueNames() }, 'rabbitmq cancelled the consumer; resubscribing');
      state.acks.flush(); // what was settled until now still goes out
      void channel.close().catch(() => {});
      return;
    }
    state.acks.received(msg);
    const parked = parkedFrom && { source: parkedFrom.queue, deliveryLimit: parkedFrom.deliveryLimit };
    const run = this.handle(new AmqpDelivery(state.acks, msg, parked));
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private handle(delivery: AmqpDelivery): Promise<void> {
    return runHandler(this.handler, delivery, this.options.logger, { topic: delivery.topic });
  }

  /** Stops new deliveries and waits (bounded) for running handlers, then sends their acks, before the channel closes. */
  private async drain(channel: AmqpChannel, state: ConsumerState): Promise<void> {
    for (const tag of state.consumerTags) await channel.cancel(tag).catch(() => {});
    await waitForHandlers(this.running, this.options.closeTimeoutMs);
    state.acks.flush();
  }

  private queueNames(): string {
    return this.queues.map((q) => q.queue).join(',');
  }
}
