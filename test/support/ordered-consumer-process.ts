/**
 * A consumer in its own process for order tests: it declares the queue with single active consumer
 * (the topology, as every process of the group does), applies `ledger.entry` messages into an
 * OrderLog with `parallelism: 4`, and prints "ready" once subscribed. It runs until killed.
 * Env: SURETY_AMQP_URL, SURETY_EXCHANGE, SURETY_QUEUE (also the group), SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_NAME.
 */
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { orderedQueueTopology, type LedgerEntry } from './ledger.js';
import { OrderLog, variableWork } from './order-log.js';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};
const name = env('SURETY_NAME');
const queue = env('SURETY_QUEUE');
const exchange = env('SURETY_EXCHANGE');

const store = await createPostgresStore({
  connectionString: env('SURETY_PG_URL'),
  schema: env('SURETY_PG_SCHEMA'),
});
const transport = await createRabbitMqTransport({
  url: env('SURETY_AMQP_URL'),
  exchange,
  connectionName: name,
  topology: orderedQueueTopology(exchange, queue),
});
if (!(await transport.waitUntilReady(10_000))) throw new Error('RabbitMQ unreachable');
const log = new OrderLog(env('SURETY_PG_SCHEMA'));
const consumer = new Consumer({ group: queue, store, transport, logger: silentLogger, parallelism: 4 }).on(
  'ledger.entry',
  async (entry: LedgerEntry, { tx }) => {
    await variableWork();
    await log.record(tx, entry.account, entry.seq, name);
  },
);
await consumer.start();
process.stdout.write('ready\n');
