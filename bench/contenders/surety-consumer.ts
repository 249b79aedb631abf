/**
 * Surety's consumer as the README writes it (default options unless the parent passes some), with a
 * one-INSERT handler. `go` resolves once `messages` deliveries were committed and acked (counted by
 * wrapping the transport's subscribe, which resolves per settled delivery) or when told to finish; with `record`, it returns
 * when each handler was first called, by message id.
 */
import { Consumer, type Subscriber } from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { TYPE } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { now } from '../lib/pace.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
  readonly amqpUrl: string;
  readonly exchange: string;
  readonly group: string;
  readonly handlerConcurrency?: number;
  readonly parallelism?: number;
  readonly record?: boolean;
}

serveContender<Args>(async ({ pgUrl, schema, amqpUrl, exchange, group, handlerConcurrency, parallelism, record }) => {
  const store = await createPostgresStore({ connectionString: pgUrl, schema });
  const transport = await createRabbitMqTransport({ url: amqpUrl, exchange });
  let settled = 0;
  let target = Infinity;
  let reached: (() => void) | undefined;
  const arrivedAt = new Map<string, number>();
  const counting: Subscriber = {
    subscribe: (options, handler) =>
      transport.subscribe(options, async (delivery) => {
        if (record && !arrivedAt.has(delivery.message.id)) arrivedAt.set(delivery.message.id, now());
        await handler(delivery);
        if (++settled >= target) reached?.();
      }),
  };
  const handledAt = new Map<string, number>();
  const insert = `INSERT INTO "${schema}".effects (id, total) VALUES ($1, $2)`;
  const consumer = new Consumer({
    group,
    store,
    transport: counting,
    ...(handlerConcurrency ? { handlerConcurrency } : {}),
    ...(parallelism ? { parallelism } : {}),
  }).on(TYPE, async (_payload, { tx, envelope }) => {
    if (record && !handledAt.has(envelope.id)) handledAt.set(envelope.id, now());
    await tx.query(insert, [envelope.id, 1234]);
  });
  return {
    async run(goArgs) {
      const { messages } = goArgs as { messages: number };
      target = messages;
      const done = new Promise<void>((r) => (reached = r));
      await consumer.start();
      await done;
      return record ? { handledAt: [...handledAt], arrivedAt: [...arrivedAt] } : { settled };
    },
    finish: () => reached?.(),
    async close() {
      await consumer.stop();
      await transport.close();
      await store.close();
    },
  };
});
