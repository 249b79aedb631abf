import { SuretyError, describeError } from '../../core/errors.js';
import type { Delivery, OutgoingMessage, SubscribeOptions, Subscription, Transport } from '../../ports/transport.js';
import { NatsConnectionManager } from './connection.js';
import { loadNats, type NatsDriver } from './driver.js';
import { MAX_PREFETCH, resolveOptions, type NatsTransportOptions, type ResolvedNatsOptions } from './options.js';
import { JetStreamPublisher } from './publisher.js';
import { JetStreamSubscription } from './subscription.js';
import { parseSubscribeOptions } from '../subscribe-options.js';

/** The NATS JetStream transport: the `Transport` port. */
export interface NatsTransport extends Transport {
  readonly name: 'nats';
  readonly settlement: 'ack';
}

/**
 * Creates a NATS JetStream transport and starts connecting in the background. The NATS client is
 * imported here, on first use; without it this rejects with DriverMissingError. Options are
 * validated at once (InvalidOptionError). `subscribe` waits for the first connection (up to
 * `startTimeoutMs`); `publish` does not: it fails fast while disconnected, so wait for
 * `waitUntilReady` first.
 *
 * @example
 * ```ts
 * const transport = await createNatsTransport({
 *   url: 'nats://localhost:4222',
 *   topology: { streams: [{ name: 'orders', subjects: ['order.>'] }] },
 * });
 * if (!(await transport.waitUntilReady(5_000))) throw new Error('NATS unreachable');
 * await transport.publish({ topic: 'order.created', message: encodeEnvelope(envelope) });
 * await transport.close();
 * ```
 */
export async function createNatsTransport(options: NatsTransportOptions): Promise<NatsTransport> {
  const resolved = resolveOptions(options);
  return startNatsTransport(resolved, await loadNats());
}

function startNatsTransport(options: ResolvedNatsOptions, driver: NatsDriver): NatsTransport {
  const manager = new NatsConnectionManager(driver, options);
  const publisher = new JetStreamPublisher(manager, driver, options);
  const subscriptions = new Set<JetStreamSubscription>();
  let closed = false;
  manager.start();

  return Object.freeze({
    name: 'nats' as const,
    settlement: 'ack' as const,
    publish: (out: OutgoingMessage) => publisher.publish(out),
    isReady: () => !closed && manager.ready,
    waitUntilReady: (timeoutMs: number) => (closed ? Promise.resolve(false) : manager.waitUntilReady(timeoutMs)),

    async subscribe(input: SubscribeOptions, handler: (delivery: Delivery) => Promise<void>): Promise<Subscription> {
      if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the NATS transport is closed');
      const { group, topics, prefetch = options.prefetch } = parseSubscribeOptions(input, MAX_PREFETCH);
      const subjects = new Map(topics.map((topic) => [options.subject(topic), topic]));
      const subscription = new JetStreamSubscription(manager, options, group, subjects, prefetch, handler, () =>
        subscriptions.delete(subscription),
      );
      subscriptions.add(subscription); // before starting, so that a concurrent close() stops it too
      try {
        await subscription.start();
      } catch (err) {
        await subscription.close();
        if (closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the NATS transport closed while subscribing');
        throw translateSubscribeError(err, group);
      }
      return subscription;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      publisher.close();
      await Promise.all([...subscriptions].map((s) => s.close()));
      await manager.close();
    },
  });
}

/** JetStream refusing a consumer (an API error) is a configuration problem; anything else, the connection. */
function translateSubscribeError(err: unknown, group: string): SuretyError {
  if (err instanceof SuretyError) return err;
  const refused = (err as { name?: unknown } | null)?.name === 'JetStreamApiError';
  return new SuretyError(
    refused ? 'SURETY_INVALID_OPTION' : 'SURETY_CONNECTION_LOST',
    `${refused ? 'JetStream refused the subscription of' : 'could not subscribe'} group ${group}: ${describeError(err)}`,
    { cause: err },
  );
}
