/**
 * Surety's relay as the README sets it up, default options. With `messages`, `go` resolves once that
 * many publishes were confirmed (the one hook: onConfirmed counts them); without, once started.
 * RabbitMQ unless `transport` names another broker (lib/broker-transport.ts).
 */
import { OutboxRelay } from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { openTransport, type BrokerArgs } from '../lib/broker-transport.js';
import { serveContender } from '../lib/contender-entry.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
  readonly amqpUrl?: string;
  readonly exchange?: string;
  readonly transport?: BrokerArgs;
}

serveContender<Args>(async ({ pgUrl, schema, amqpUrl, exchange, transport: to }) => {
  const store = await createPostgresStore({ connectionString: pgUrl, schema });
  const transport = await openTransport(to ?? { broker: 'rabbitmq', amqpUrl: amqpUrl!, exchange: exchange! });
  let confirmed = 0;
  let target = Infinity;
  let reached: (() => void) | undefined;
  const relay = new OutboxRelay({
    store,
    publisher: transport,
    onConfirmed: () => {
      if (++confirmed >= target) reached?.();
    },
  });
  return {
    async run(goArgs) {
      const { messages } = (goArgs ?? {}) as { messages?: number };
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
