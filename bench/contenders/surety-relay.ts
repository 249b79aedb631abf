/**
 * Surety's relay as the README sets it up, default options. With `messages`, `go` resolves once that
 * many publishes were confirmed (the one hook: onConfirmed counts them); without, once started.
 * RabbitMQ unless `transport` names another broker (lib/broker-transport.ts). With `record`, it
 * notes when each message was handed to the transport, and a later `go({ report: true })` returns
 * those times by message id (the end-to-end scenario splits its latency there).
 */
import { OutboxRelay } from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { openTransport, type BrokerArgs } from '../lib/broker-transport.js';
import { serveContender } from '../lib/contender-entry.js';
import { now } from '../lib/pace.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
  readonly amqpUrl?: string;
  readonly exchange?: string;
  readonly transport?: BrokerArgs;
  readonly record?: boolean;
}

serveContender<Args>(async ({ pgUrl, schema, amqpUrl, exchange, transport: to, record }) => {
  const store = await createPostgresStore({ connectionString: pgUrl, schema });
  const transport = await openTransport(to ?? { broker: 'rabbitmq', amqpUrl: amqpUrl!, exchange: exchange! });
  let confirmed = 0;
  let target = Infinity;
  let reached: (() => void) | undefined;
  const publishedAt = new Map<string, number>();
  const publisher: typeof transport = record
    ? {
        publish: (out) => {
          if (!publishedAt.has(out.message.id)) publishedAt.set(out.message.id, now());
          return transport.publish(out);
        },
        isReady: () => transport.isReady(),
        waitUntilReady: (ms) => transport.waitUntilReady(ms),
        close: () => transport.close(),
      }
    : transport;
  const relay = new OutboxRelay({
    store,
    publisher,
    onConfirmed: () => {
      if (++confirmed >= target) reached?.();
    },
  });
  return {
    async run(goArgs) {
      const { messages, report } = (goArgs ?? {}) as { messages?: number; report?: boolean };
      if (report) return { publishedAt: [...publishedAt] };
      const done = messages ? new Promise<void>((r) => (reached = r)) : Promise.resolve();
      target = messages ?? Infinity;
      await relay.start();
      await done;
      return { confirmed };
    },
    async close() {
      await relay.stop();
      await transport.close();
      await store.close();
    },
  };
});
