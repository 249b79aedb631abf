/**
 * A consumer in its own process, for crash tests. It SIGKILLs itself at SURETY_CRASH_AT:
 *   before-ack      the handler's transaction committed, the ack not yet sent
 *   mid-handler     inside the handler, after its write, before the commit
 *   every-delivery  as soon as its handler is called, on every delivery (a crash loop)
 * Env: SURETY_BROKER (rabbitmq | embedded), SURETY_LOG_PATH, SURETY_EXCHANGE, SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_GROUP, SURETY_EFFECTS.
 * Optional: SURETY_DELIVERY_LIMIT (declare the group's queue in the topology with that limit, bound to
 * every topic), SURETY_RETRY=broker (the broker retry strategy).
 */
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { Subscriber } from '../../src/ports/transport.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const env = (n: string) =>
  process.env[n] ??
  (() => {
    throw new Error(`${n} is required`);
  })();
const crashAt = env('SURETY_CRASH_AT');
const die = () => process.kill(process.pid, 'SIGKILL');

const store = await createPostgresStore({
  connectionString: env('SURETY_PG_URL'),
  schema: env('SURETY_PG_SCHEMA'),
});
const deliveryLimit = process.env.SURETY_DELIVERY_LIMIT;
const topology =
  deliveryLimit === undefined
    ? undefined
    : {
        queues: [{ name: env('SURETY_GROUP'), deliveryLimit: Number(deliveryLimit) }],
        bindings: [{ exchange: env('SURETY_EXCHANGE'), queue: env('SURETY_GROUP'), pattern: '#' }],
      };
const transport =
  env('SURETY_BROKER') === 'rabbitmq'
    ? await createRabbitMqTransport({ url: env('SURETY_AMQP_URL'), exchange: env('SURETY_EXCHANGE'), topology })
    : await createEmbeddedTransport({ path: env('SURETY_LOG_PATH'), pollIntervalMs: 20, leaseTtlMs: 1_000 });
if ('waitUntilReady' in transport) await transport.waitUntilReady(10_000);
const killingSubscriber: Subscriber = {
  subscribe: (options, handler) =>
    transport.subscribe(options, (delivery) =>
      handler({
        ...delivery,
        message: delivery.message,
        topic: delivery.topic,
        redeliveries: delivery.redeliveries,
        exhausted: delivery.exhausted,
        ack: async () => {
          if (crashAt === 'before-ack') die();
          return delivery.ack();
        },
        retry: () => delivery.retry(),
      }),
    ),
};
const consumer = new Consumer({
  group: env('SURETY_GROUP'),
  store,
  transport: killingSubscriber,
  logger: silentLogger,
  batchSize: 1,
  ...(process.env.SURETY_RETRY === 'broker' ? { brokerRetry: { enabled: true } as const } : {}),
});
consumer.on('order.created', async (_p, { tx, envelope }) => {
  if (crashAt === 'every-delivery') die();
  await tx.query(`INSERT INTO ${env('SURETY_EFFECTS')} (message_id, group_name, note) VALUES ($1, $2, $3)`, [
    envelope.id,
    env('SURETY_GROUP'),
    'child',
  ]);
  if (crashAt === 'mid-handler') die();
});
await consumer.start();
process.stdout.write('ready\n');
