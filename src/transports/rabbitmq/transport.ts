import { z } from 'zod';
import { SuretyError, describeError } from '../../core/errors.js';
import { parseOptions } from '../../core/options.js';
import type { Delivery, OutgoingMessage, SubscribeOptions, Subscription, Transport } from '../../ports/transport.js';
import { ConnectionManager } from './connection.js';
import { loadAmqplib, type AmqpDriver } from './driver.js';
import { inspectQueue, type QueueInspection } from './inspect-queue.js';
import {
  MAX_PREFETCH,
  resolveOptions,
  type RabbitMqRoute,
  type RabbitMqTransportOptions,
  type ResolvedRabbitMqOptions,
} from './options.js';
import { ConfirmPublisher } from './publisher.js';
import { RabbitMqSubscription, type ConsumedQueue } from './subscription.js';
import { resolveGroupQueue, type ResolvedQueue } from './topology.js';
import { parseSubscribeOptions } from '../subscribe-options.js';

/** The RabbitMQ transport: the `Transport` port plus a look at queues for diagnostics. */
export interface RabbitMqTransport extends Transport {
  readonly name: 'rabbitmq';
  readonly settlement: 'ack';
  /** Message and consumer counts of a queue, or undefined when it does not exist. */
  inspectQueue(name: string): Promise<QueueInspection | undefined>;
}

/**
 * Creates a RabbitMQ transport and starts connecting in the background. amqplib is imported here,
 * on first use; without it this rejects with DriverMissingError. Options are validated at once
 * (InvalidOptionError). `subscribe` waits for the first connection (up to `startTimeoutMs`);
 * `publish` does not: it fails fast while disconnected, so wait for `waitUntilReady` first. The open
 * connection keeps the process alive until `close()`.
 *
 * @example
 * ```ts
 * const transport = await createRabbitMqTransport({ url: 'amqp://guest:guest@localhost:5672' });
 * const subscription = await transport.subscribe({ group: 'billing', topics: ['order.created'] }, handle);
 * if (!(await transport.waitUntilReady(5_000))) throw new Error('RabbitMQ unreachable');
 * await transport.publish({ topic: 'order.created', message: encodeEnvelope(envelope) });
 * await subscription.close();
 * await transport.close();
 * ```
 */
export async function createRabbitMqTransport(options: RabbitMqTransportOptions): Promise<RabbitMqTransport> {
  const resolved = resolveOptions(options);
  return startRabbitMqTransport(resolved, await loadAmqplib());
}

function startRabbitMqTransport(options: ResolvedRabbitMqOptions, driver: AmqpDriver): RabbitMqTransport {
  const manager = new ConnectionManager(driver, options);
  const publisher = new ConfirmPublisher(manager, options);
  const subscriptions = new Set<RabbitMqSubscription>();
  let closed = false;
  publisher.start();
  manager.start();

  return Object.freeze({
    name: 'rabbitmq' as const,
    settlement: 'ack' as const,
    publish: (out: OutgoingMessage) => publisher.publish(out),
    isReady: () => publisher.isReady(),
    waitUntilReady: (timeoutMs: number) => publisher.waitUntilReady(timeoutMs),
    inspectQueue: (name: string) => inspectQueue(manager, name),

    async subscribe(
      subscribeOptions: SubscribeOptions,
      handler: (delivery: Delivery) => Promise<void>,
    ): Promise<Subscription> {
      if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the RabbitMQ transport is closed');
      const { queues, prefetch } = planSubscription(options, subscribeOptions);
      const subscription = new RabbitMqSubscription(manager, options, queues, prefetch, handler, () =>
        subscriptions.delete(subscription),
      );
      subscriptions.add(subscription); // before starting, so that a concurrent close() stops it too
      try {
        await subscription.start();
      } catch (err) {
        await subscription.close();
        throw closed
          ? new SuretyError('SURETY_TRANSPORT_CLOSED', 'the RabbitMQ transport closed while subscribing')
          : translateSubscribeError(err, queues);
      }
      return subscription;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([publisher.close(), ...[...subscriptions].map((s) => s.close())]);
      await manager.close();
    },
  });
}

const queueNameSchema = z.string({ error: 'must return a non-empty queue name' }).min(1, {
  error: 'must return a non-empty queue name',
});

function planSubscription(
  options: ResolvedRabbitMqOptions,
  input: SubscribeOptions,
): { queues: ConsumedQueue[]; prefetch: number } {
  const { group, topics, prefetch = options.prefetch } = parseSubscribeOptions(input, MAX_PREFETCH);
  const byQueue = new Map<string, RabbitMqRoute[]>();
  for (const topic of topics) {
    const queue = parseOptions(queueNameSchema, options.queueForGroup(group, topic), 'queueForGroup');
    const routes = byQueue.get(queue) ?? [];
    routes.push(options.route(topic));
    byQueue.set(queue, routes);
  }
  const declared = new Map(options.topology.queues.map((q) => [q.name, q]));
  const queues = [...byQueue].map(([queue, bindings]): ConsumedQueue => {
    const known = declared.get(queue);
    // A group's own queue: quorum and durable, parked unless the topology opts out.
    const spec = known ?? resolveGroupQueue(queue, options.topology.deadLetterParking);
    return { queue, bindings, declare: known ? undefined : spec, ...parkingOf(spec) };
  });
  return { queues, prefetch };
}

function parkingOf(q: ResolvedQueue): Pick<ConsumedQueue, 'parkingQueue' | 'deliveryLimit'> {
  const limit = q.arguments['x-delivery-limit'];
  return { parkingQueue: q.parkingQueue, deliveryLimit: typeof limit === 'number' && limit >= 0 ? limit : null };
}

/** The broker refusing a declare, bind or consume (an AMQP reply code) is a configuration problem. */
function translateSubscribeError(err: unknown, queues: readonly ConsumedQueue[]): SuretyError {
  if (err instanceof SuretyError) return err; // a refused declaration says which queue and what to do
  const names = queues.map((q) => q.queue).join(', ');
  const replyCode = (err as { code?: unknown } | null)?.code;
  if (typeof replyCode === 'number') {
    return new SuretyError(
      'SURETY_INVALID_OPTION',
      `RabbitMQ refused the subscription to ${names}: ${describeError(err)}`,
      { cause: err },
    );
  }
  return new SuretyError('SURETY_CONNECTION_LOST', `could not subscribe to ${names}: ${describeError(err)}`, {
    cause: err,
  });
}
