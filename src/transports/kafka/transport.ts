import { z } from 'zod';
import { SuretyError, describeError } from '../../core/errors.js';
import { integerIn, listOf, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { Delivery, OutgoingMessage, SubscribeOptions, Subscription, Transport } from '../../ports/transport.js';
import { ConnectionState } from './connection.js';
import { loadKafkaClient, type KafkaDriver } from './driver.js';
import { resolveOptions, type KafkaTransportOptions, type ResolvedKafkaOptions } from './options.js';
import { BatchingPublisher } from './publisher.js';
import { KafkaSubscription } from './subscription.js';

/** The Kafka transport: the `Transport` port, settled by committed offsets. */
export interface KafkaTransport extends Transport {
  readonly name: 'kafka';
  readonly settlement: 'checkpoint';
}

/**
 * Creates a Kafka transport: an idempotent producer with acks=all, and one consumer-group member
 * per subscription committing offsets by hand. @platformatic/kafka is imported here, on first use;
 * without it this rejects with DriverMissingError. Options are validated at once
 * (InvalidOptionError). The topology's topics are created on the first connection.
 *
 * @example
 * ```ts
 * const transport = await createKafkaTransport({ brokers: 'localhost:9092', topology: { topics: [{ name: 'order.created', partitions: 6, replicationFactor: 3, minInsyncReplicas: 2 }] } });
 * if (!(await transport.waitUntilReady(5_000))) throw new Error('Kafka unreachable');
 * await transport.publish({ topic: 'order.created', message: encodeEnvelope(envelope) });
 * const subscription = await transport.subscribe({ group: 'billing', topics: ['order.created'] }, handle);
 * ```
 */
export async function createKafkaTransport(options: KafkaTransportOptions): Promise<KafkaTransport> {
  const resolved = resolveOptions(options);
  return startKafkaTransport(resolved, await loadKafkaClient());
}

function clientOptions(options: ResolvedKafkaOptions, suffix: string) {
  return {
    clientId: `${options.clientId}-${suffix}`,
    bootstrapBrokers: [...options.brokers],
    connectTimeout: options.connectTimeoutMs,
    timeout: options.publishTimeoutMs,
    retries: 3,
    retryDelay: 250,
    // Topics are topology: a typo must fail the publish, not create a topic.
    autocreateTopics: false,
  };
}

function startKafkaTransport(options: ResolvedKafkaOptions, driver: KafkaDriver): KafkaTransport {
  const producer = new driver.Producer({ ...clientOptions(options, 'producer'), idempotent: true, acks: -1 });
  const admin = new driver.Admin(clientOptions(options, 'admin'));
  const connection = new ConnectionState(producer, admin, options);
  const publisher = new BatchingPublisher(
    producer,
    options,
    () => connection.topologyReady(),
    (ok, err) => connection.observe(ok, err?.code),
  );
  const subscriptions = new Set<KafkaSubscription>();
  let closed = false;
  connection.start();

  return Object.freeze({
    name: 'kafka' as const,
    settlement: 'checkpoint' as const,
    publish: (out: OutgoingMessage) => publisher.publish(out),
    isReady: () => !closed && connection.isReady(),
    waitUntilReady: (timeoutMs: number) => connection.waitUntilReady(timeoutMs),

    async subscribe(input: SubscribeOptions, handler: (delivery: Delivery) => Promise<void>): Promise<Subscription> {
      if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the Kafka transport is closed');
      const { group, topics, prefetch = options.prefetch } = parseOptions(subscribeSchema, input, '');
      const makeConsumer = () =>
        new driver.Consumer({
          ...clientOptions(options, `consumer-${group}`),
          groupId: options.groupId(group),
          autocommit: false,
          sessionTimeout: options.sessionTimeoutMs,
          heartbeatInterval: options.heartbeatIntervalMs,
          rebalanceTimeout: options.sessionTimeoutMs,
        });
      const byKafkaName = new Map(topics.map((t) => [options.topicName(t), t]));
      const subscription = new KafkaSubscription(makeConsumer, options, { group, byKafkaName, prefetch }, handler, () =>
        subscriptions.delete(subscription),
      );
      subscriptions.add(subscription);
      try {
        if (!(await connection.waitUntilReady(options.startTimeoutMs)))
          throw new Error(`Kafka not reachable within ${options.startTimeoutMs} ms`);
        await subscription.start();
      } catch (err) {
        await subscription.close();
        if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the Kafka transport closed while subscribing');
        throw new SuretyError(
          'SURETY_CONNECTION_LOST',
          `could not subscribe ${group} to ${topics.join(', ')}: ${describeError(err)}`,
          { cause: err },
        );
      }
      return subscription;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([publisher.close(), ...[...subscriptions].map((s) => s.close())]);
      connection.close();
      await Promise.allSettled([producer.close(), admin.close()]);
    },
  });
}

const subscribeSchema = z.object(
  {
    group: nonEmptyString(),
    topics: listOf(nonEmptyString()).min(1, { error: 'must be a non-empty list of topics' }),
    prefetch: integerIn(1, 100_000).optional(),
  },
  { error: 'must be an object with "group" and "topics"' },
);
