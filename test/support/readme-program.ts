/**
 * The README's two examples as one program, in their order: the PostgreSQL and RabbitMQ producer
 * (store, transport with a topology queue, outbox, relay), then the consumer and replay job started
 * at once, one order, and the clean shutdown. Names come from the environment so that the test stays
 * isolated; nothing else differs. It must end by itself: it never calls process.exit.
 * Env: SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_AMQP_URL, SURETY_EXCHANGE, SURETY_QUEUE.
 * Prints "invoiced <order id> <total>" once the invoice is committed.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Consumer, Outbox, OutboxRelay, PermanentError, ReplayJob } from '../../src/index.js';
import { createPostgresOutboxStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const schema = env('SURETY_PG_SCHEMA');
const exchange = env('SURETY_EXCHANGE');
const queue = env('SURETY_QUEUE');

// The README's tables, unqualified as there: the schema of this run comes first in the search path.
const pool = new pg.Pool({ connectionString: env('SURETY_PG_URL'), options: `-c search_path=${schema}` });
const store = await createPostgresOutboxStore({ pool, schema });
await store.migrate();
await pool.query('CREATE TABLE orders (id uuid PRIMARY KEY, total int NOT NULL)');
await pool.query('CREATE TABLE invoices (order_id uuid PRIMARY KEY, total int NOT NULL)');

const transport = await createRabbitMqTransport({
  url: env('SURETY_AMQP_URL'),
  exchange,
  topology: {
    queues: [{ name: queue, type: 'quorum', deliveryLimit: 5, deadLetterExchange: `${exchange}.dlx` }],
    bindings: [{ exchange, queue, pattern: 'order.*' }],
  },
});

const outbox = new Outbox({ store });
const relay = new OutboxRelay({ store, publisher: transport, outbox, onDead: (row) => console.error('dead', row) });
await relay.start();

let invoiced: () => void = () => {};
const handled = new Promise<void>((resolve) => (invoiced = resolve));
const consumer = new Consumer({ group: queue, store, transport }).on(
  'order.created',
  async (order: { id: string; total: number }, { tx }) => {
    if (order.total < 0) throw new PermanentError('negative total');
    await tx.query('INSERT INTO invoices (order_id, total) VALUES ($1, $2)', [order.id, order.total]);
    invoiced();
  },
);
await consumer.start();
const replay = new ReplayJob(consumer, { ratePerSecond: 20 });
replay.start();

const id = randomUUID();
const total = 42;
await outbox.transaction(async (tx) => {
  await tx.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [id, total]);
  await outbox.add(tx, { type: 'order.created', key: id, payload: { id, total } });
});
await handled;

// The clean shutdown: consumers first (the batch in hand commits and is acked), then the relay, the
// broker connection, the store and the pool this program made.
await replay.stop();
await consumer.stop();
await relay.stop();
await transport.close();
const { rows } = await pool.query<{ order_id: string; total: number }>('SELECT order_id, total FROM invoices');
await store.close();
await pool.end();
for (const row of rows) console.log(`invoiced ${row.order_id} ${row.total}`);
