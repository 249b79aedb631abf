/** Throwaway: drains a backlog with the default relay, counting locked and lease claims. */
import amqp from 'amqplib';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createPostgresOutboxStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const N = Number(process.env.N ?? 20_000);
const tag = `scratchb_${Date.now().toString(36)}`;
const conn = await amqp.connect(AMQP_URL);
const ch = await conn.createChannel();
await ch.assertExchange(tag, 'topic', { durable: true });
await ch.assertQueue(`${tag}_q`, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
await ch.bindQueue(`${tag}_q`, tag, '#');
const store = await createPostgresOutboxStore({ connectionString: PG_URL, schema: tag });
await store.migrate();
const outbox = new Outbox({ store });
for (let i = 0; i < N; i += 1_000)
  await store.transaction(async (tx) => {
    for (let j = 0; j < 1_000; j++) await outbox.add(tx, { type: 'bench.event', payload: { data: 'x'.repeat(1013) } });
  });
const counts = { locked: 0, lease: 0 };
const wrapped = Object.create(store) as typeof store;
wrapped.claim = (req) => (counts.lease++, store.claim(req));
wrapped.claimLocked = (req) => (counts.locked++, store.claimLocked(req));
const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange: tag, declareExchange: false });
let confirmed = 0;
let done!: () => void;
const finished = new Promise<void>((r) => (done = r));
const relay = new OutboxRelay({
  store: wrapped,
  publisher: transport,
  logger: silentLogger,
  retention: false,
  listen: false,
  onConfirmed: () => ++confirmed === N && done(),
});
const t = performance.now();
await relay.start();
await finished;
const ms = performance.now() - t;
await relay.stop();
console.log(`${Math.round((N / ms) * 1000)} msg/s, claims ${JSON.stringify(counts)}`);
await transport.close();
await store.pool.query(`DROP SCHEMA "${tag}" CASCADE`);
await store.close();
await ch.deleteQueue(`${tag}_q`);
await ch.deleteExchange(tag);
await conn.close();
