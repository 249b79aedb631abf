/**
 * Surety's main job on the embedded default: no server needed.
 *
 * An order service writes each order and its `order.created` event in one SQLite transaction; the
 * relay publishes committed events to the embedded log (confirmed = durably appended); a billing
 * consumer reads them with its own committed offset. Run: `npm start` (Ctrl-C stops gracefully).
 *
 * Flags: --orders <n> stop after n orders were consumed · --interval <ms> between orders (default 250)
 *        --data <dir> where the SQLite files live (default .data/)
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Outbox, OutboxRelay, decodeEnvelope } from '../../src/index.js';
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

const quiet = { debug() {}, info() {}, warn: console.warn, error: console.error };
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

let produced = 0;
let consumed = 0;
const startedAt = Date.now();
const subscription = await transport.subscribe({ group: 'billing', topics: ['order.created'] }, async (delivery) => {
  const event = decodeEnvelope(delivery.message);
  const lag = Date.now() - event.createdAt.getTime();
  consumed++;
  console.log(
    `billing  <- ${event.type} ${event.key} total=${(event.payload as { totalCents: number }).totalCents / 100} (id ${event.id}, ${lag} ms after it was written)`,
  );
  await delivery.ack();
  if (consumed >= stopAfter) void shutdown();
});

console.log(
  `Surety demo: orders -> outbox (SQLite) -> relay -> embedded log -> billing consumer. Data in ${dataDir}. Ctrl-C to stop.`,
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
  await subscription.close();
  await transport.close();
  const stats = await store.stats();
  await store.close();
  const secs = ((Date.now() - startedAt) / 1000).toFixed(1);
  console.log(
    `done: ${produced} orders produced, ${consumed} consumed in ${secs}s; outbox ${stats.pending} pending, ${stats.sent} sent, ${stats.dead} dead`,
  );
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
