import { z } from 'zod';
import { SuretyError, describeError } from '../../core/errors.js';
import { integerIn, listOf, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { Delivery, OutgoingMessage, SubscribeOptions, Subscription, Transport } from '../../ports/transport.js';
import { AckCoalescer } from './ack-coalescer.js';
import { RedisConnection } from './connection.js';
import { loadIoredis, type RedisDriver } from './driver.js';
import { resolveOptions, type RedisStreamsTransportOptions, type ResolvedRedisOptions } from './options.js';
import { StreamPublisher } from './publisher.js';
import { StreamSubscription, type ConsumedStream } from './subscription.js';

/** The Redis Streams transport: the `Transport` port, with the stream a topic goes to. */
export interface RedisStreamsTransport extends Transport {
  readonly name: 'redis';
  readonly settlement: 'ack';
  /** The stream `topic` is published to (`streamForTopic`). */
  streamOf(topic: string): string;
}

/**
 * Creates a Redis Streams transport and starts connecting in the background. ioredis is imported
 * here, on first use; without it this rejects with DriverMissingError. Options are validated at
 * once (InvalidOptionError). `subscribe` waits for a connection (up to `startTimeoutMs`); `publish`
 * fails fast while disconnected, so wait for `waitUntilReady` first. The open connections keep the
 * process alive until `close()`.
 *
 * @example
 * ```ts
 * const transport = await createRedisStreamsTransport({ url: 'redis://localhost:6379' });
 * const subscription = await transport.subscribe({ group: 'billing', topics: ['order.created'] }, handle);
 * if (!(await transport.waitUntilReady(5_000))) throw new Error('Redis unreachable');
 * await transport.publish({ topic: 'order.created', message: encodeEnvelope(envelope) });
 * await subscription.close();
 * await transport.close();
 * ```
 */
export async function createRedisStreamsTransport(
  options: RedisStreamsTransportOptions,
): Promise<RedisStreamsTransport> {
  const resolved = resolveOptions(options);
  return startRedisStreamsTransport(resolved, await loadIoredis());
}

function startRedisStreamsTransport(options: ResolvedRedisOptions, driver: RedisDriver): RedisStreamsTransport {
  const commands = new RedisConnection(driver, options, options.connectionName);
  const publisher = new StreamPublisher(commands, options);
  const acks = new AckCoalescer(commands);
  const subscriptions = new Set<StreamSubscription>();
  /** Consumer names in use per group: a second subscription of a group gets its own. */
  const consumers = new Map<string, Set<string>>();
  let closed = false;

  const takeConsumerName = (group: string): string => {
    const taken = consumers.get(group) ?? new Set<string>();
    consumers.set(group, taken);
    let name = options.consumerName;
    for (let n = 2; taken.has(name); n++) name = `${options.consumerName}.${n}`;
    taken.add(name);
    return name;
  };

  return Object.freeze({
    name: 'redis' as const,
    settlement: 'ack' as const,
    publish: (out: OutgoingMessage) => publisher.publish(out),
    isReady: () => !closed && commands.isReady(),
    waitUntilReady: async (timeoutMs: number) => !closed && (await commands.waitUntilReady(timeoutMs)),
    streamOf: (topic: string) => options.streamForTopic(topic),

    async subscribe(
      subscribeOptions: SubscribeOptions,
      handler: (delivery: Delivery) => Promise<void>,
    ): Promise<Subscription> {
      if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the Redis transport is closed');
      const { group, streams, prefetch } = planSubscription(options, subscribeOptions);
      const consumer = takeConsumerName(group);
      const subscription = new StreamSubscription(
        { driver, options, commands, acks },
        streams,
        group,
        consumer,
        prefetch,
        handler,
        () => {
          subscriptions.delete(subscription);
          consumers.get(group)?.delete(consumer);
        },
      );
      subscriptions.add(subscription); // before starting, so that a concurrent close() stops it too
      try {
        await subscription.start();
      } catch (err) {
        await subscription.close();
        if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the Redis transport closed while subscribing');
        if (err instanceof SuretyError) throw err;
        const names = streams.map((s) => s.stream).join(', ');
        const code =
          (err as { name?: unknown } | null)?.name === 'ReplyError'
            ? 'SURETY_INVALID_OPTION'
            : 'SURETY_CONNECTION_LOST';
        throw new SuretyError(code, `could not subscribe to ${names}: ${describeError(err)}`, { cause: err });
      }
      return subscription;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([publisher.close(), ...[...subscriptions].map((s) => s.close())]);
      publisher.abandon();
      commands.close();
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

const streamNameSchema = z.string({ error: 'must return a non-empty stream name' }).min(1, {
  error: 'must return a non-empty stream name',
});

function planSubscription(
  options: ResolvedRedisOptions,
  input: SubscribeOptions,
): { group: string; streams: ConsumedStream[]; prefetch: number } {
  const { group, topics, prefetch = options.prefetch } = parseOptions(subscribeSchema, input, '');
  const byStream = new Map<string, ConsumedStream>();
  for (const topic of topics) {
    const stream = parseOptions(streamNameSchema, options.streamForTopic(topic), 'streamForTopic');
    if (!byStream.has(stream)) byStream.set(stream, { stream, topic });
  }
  return { group, streams: [...byStream.values()], prefetch };
}
