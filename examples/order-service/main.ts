/**
 * Surety's main job on the embedded default: no server needed.
 *
 * An order service writes each order and its `order.created` event in one SQLite transaction; the
 * relay publishes committed events to the embedded log (confirmed = durably appended); a billing
 * service consumes them exactly once into its own SQLite database (inbox record and invoice in one
 * transaction, then the checkpoint). Its payment provider fails every fourth order at first: those
 * land in the dead-letter table and the replay job retries them with backoff until they pass.
 * Run: `npm start` (Ctrl-C stops gracefully).
 *
 * Flags: --orders <n> stop after n orders were invoiced · --interval <ms> between orders (default 250)
 *        --data <dir> where the SQLite files live (default .data/)
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Consumer, Outbox, OutboxRelay, ReplayJob } from '../../src/index.js';
import { createSqliteOutboxStore } from '../../src/stores/sqlite/index.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';

const { values } = parseArgs({
  options: {
    orders: { type: 'string' },
    interval: { type: 'string', default: '250' },
    data: { type: 'string', default: '.data' },
  },
});
const stopAfter = values.orders === undefined ? Infinity : Number(values.orders);
const intervalMs = Number(values.interval);
if (!(stopAfter > 0) || !(intervalMs >= 0)) {
  console.error('usage: npm start -- [--orders <n> (n > 0)] [--interval <ms> (>= 0)] [--data <dir>]');
  process.exit(2);
}
const dataDir = resolve(values.data);
mkdirSync(dataDir, { recursive: true });
const quiet = { debug() {}, info() {}, warn() {}, error: console.error };

// The order service: orders and the outbox in one database.
const store = await createSqliteOutboxStore({ path: join(dataDir, 'orders.sqlite') });
await store.migrate();
await store.transaction((tx) =>
  tx.query(
    'CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, customer TEXT NOT NULL, total_cents INTEGER NOT NULL)',
  ),
);
const transport = await createEmbeddedTransport({ path: join(dataDir, 'broker.sqlite') });
const outbox = new Outbox({ store });
const relay = new OutboxRelay({ store, publisher: transport, outbox, logger: quiet, pollIntervalMs: 500 });
await relay.start();

// The billing service: its own database, with its inbox and dead letters.
const billing = await createSqliteOutboxStore({ path: join(dataDir, 'billing.sqlite') });
await billing.migrate();
await billing.transaction((tx) =>
  tx.query('CREATE TABLE IF NOT EXISTS invoices (order_id TEXT PRIMARY KEY, total_cents INTEGER NOT NULL)'),
);
let produced = 0;
let invoiced = 0;
const startedAt = Date.now();
const timedOutOnce = new Set<string>();
const consumer = new Consumer({
  group: 'billing',
  store: billing,
  transport,
  logger: quiet,
  deadLetters: { scheduleMs: [1_000, 2_000, 4_000], maxAttempts: 5 },
  batchSize: 1, // the handler prints: one message per transaction so no print repeats after a rollback
}).on('order.created', async (order: { orderId: string; totalCents: number }, { tx, envelope, replay }) => {
  if (Number(order.orderId.split('-').at(-1)) % 4 === 3 && !timedOutOnce.has(order.orderId)) {
    timedOutOnce.add(order.orderId);
    console.log(`billing  !! ${order.orderId}: payment provider timed out -> dead letter, replayed later`);
    throw new Error('payment provider timed out');
  }
  await tx.query('INSERT INTO invoices (order_id, total_cents) VALUES (?, ?)', [order.orderId, order.totalCents]);
  invoiced++;
  const lag = Date.now() - envelope.createdAt.getTime();
  console.log(
    `billing  <- ${envelope.type} ${order.orderId} invoiced ${(order.totalCents / 100).toFixed(2)}${replay ? ' (replayed)' : ''} (id ${envelope.id}, ${lag} ms after it was written)`,
  );
  if (invoiced >= stopAfter) setImmediate(() => void shutdown());
});
await consumer.start();
const replayJob = new ReplayJob(consumer, { intervalMs: 500 });
replayJob.start();

console.log(
  `Surety demo: orders -> outbox (SQLite) -> relay -> embedded log -> billing (inbox, dead letters, replay). Data in ${dataDir}. Ctrl-C to stop.`,
);
const timer = setInterval(() => void placeOrder(), intervalMs);

async function placeOrder(): Promise<void> {
  if (produced >= stopAfter) return;
  const id = `order-${Date.now().toString(36)}-${produced}`;
  const totalCents = 1_000 + Math.floor(Math.random() * 9_000);
  produced++;
  await outbox.transaction(async (tx) => {
    await tx.query('INSERT INTO orders (id, customer, total_cents) VALUES (?, ?, ?)', [id, 'ada', totalCents]);
    await outbox.add(tx, { type: 'order.created', key: id, payload: { orderId: id, totalCents } });
  });
  console.log(`orders   -> order.created ${id} committed with its outbox row`);
}

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(timer);
  await relay.stop();
  await replayJob.stop();
  await consumer.stop();
  await transport.close();
  const stats = await store.stats();
  const letters = await billing.countDeadLetters('billing');
  await store.close();
  await billing.close();
  const secs = ((Date.now() - startedAt) / 1000).toFixed(1);
  console.log(
    `done: ${produced} orders produced, ${invoiced} invoiced in ${secs}s; outbox ${stats.pending} pending, ${stats.sent} sent, ${stats.dead} dead; dead letters ${letters.resolved} resolved, ${letters.pending + letters.replaying} waiting, ${letters.dead} dead`,
  );
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
