/**
 * Surety's main job on the embedded default: no server needed.
 *
 * An order service writes each order and its `order.created` event in one transaction of its own
 * SQLite database; the relay publishes committed events to the embedded log (confirmed = durably
 * appended); a billing service consumes them exactly once into its own SQLite database (inbox record
 * and invoice in one transaction, then the checkpoint). The operations console, served on localhost,
 * reads both databases (stores "orders" and "billing") and follows each message from the outbox to
 * the invoice across them.
 *
 * The payment provider times out on every fourth order at first: the replay job retries those with
 * backoff by itself. The fraud check flags every tenth order: it goes dead at once and waits for an
 * operator, who reviews it and presses Replay in the console; the replay then passes.
 * Run: `npm start` (Ctrl-C stops gracefully).
 *
 * Flags: --orders <n> stop after n orders were invoiced · --interval <ms> between orders (default 250)
 *        --data <dir> where the SQLite files live (default .data/)
 *        --port <n> the console's port on 127.0.0.1 (default 8090, the next free one if taken; 0 picks any)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mergeDoctorReports, runDoctor, startAdminServer, type AdminServer } from 'surety/admin';
import { Consumer, Outbox, OutboxRelay, PermanentError, ReplayJob } from 'surety';
import { createSqliteStore, type SqliteStore } from 'surety/sqlite';
import { createEmbeddedQueueProbe, createEmbeddedTransport, embeddedQueueName } from 'surety/embedded';

const { values } = parseArgs({
  options: {
    orders: { type: 'string' },
    interval: { type: 'string', default: '250' },
    data: { type: 'string', default: '.data' },
    port: { type: 'string', default: '8090' },
  },
});
const stopAfter = values.orders === undefined ? Infinity : Number(values.orders);
const intervalMs = Number(values.interval);
const port = Number(values.port);
if (!(stopAfter > 0) || !(intervalMs >= 0) || !Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(
    'usage: npm start -- [--orders <n> (n > 0)] [--interval <ms> (>= 0)] [--data <dir>] [--port <0-65535>]',
  );
  process.exit(2);
}
const dataDir = resolve(values.data);
mkdirSync(dataDir, { recursive: true });
// Errors only, one line each (a dead letter is one: it needs an operator).
const quiet = {
  debug() {},
  info() {},
  warn() {},
  error: (obj: object, msg?: string) => console.error(`error: ${msg ?? ''} ${JSON.stringify(obj)}`),
};

// Each service has its own database, as in production: orders and the outbox; invoices, the inbox and dead letters.
const orders = await openDatabase(
  'orders',
  'CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, customer TEXT NOT NULL, total_cents INTEGER NOT NULL)',
);
const billing = await openDatabase(
  'billing',
  'CREATE TABLE IF NOT EXISTS invoices (order_id TEXT PRIMARY KEY, total_cents INTEGER NOT NULL)',
);
const transport = await createEmbeddedTransport({ path: join(dataDir, 'broker.sqlite') });
// The doctor reads the log read-only: billing's backlog and whether its consumer is alive.
const probe = createEmbeddedQueueProbe({ path: join(dataDir, 'broker.sqlite') });
const outbox = new Outbox({ store: orders });
const relay = new OutboxRelay({ store: orders, publisher: transport, outbox, logger: quiet, pollIntervalMs: 500 });
await relay.start();

// The operations console over both databases, on loopback only, with tokens made up for this run.
const operatorToken = randomBytes(18).toString('base64url');
const viewerToken = randomBytes(18).toString('base64url');
const stores = { orders, billing };
const server = await startConsole({
  stores,
  host: '127.0.0.1',
  port,
  tokens: [
    { name: 'local-operator', role: 'operator', token: operatorToken },
    { name: 'local-viewer', role: 'viewer', token: viewerToken },
  ],
  // Each database's producer and consumer checks, the broker (the log) once, one verdict across them.
  doctor: async () =>
    mergeDoctorReports([
      {
        store: 'orders',
        report: await runDoctor({
          store: stores.orders,
          probe,
          knownQueues: [embeddedQueueName('order.created', 'billing')],
        }),
      },
      { store: 'billing', report: await runDoctor({ store: stores.billing }) },
    ]),
  logger: quiet,
});

// The billing service.
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
  const n = Number(order.orderId.split('-').at(-1));
  if (n % 4 === 3 && !timedOutOnce.has(order.orderId)) {
    timedOutOnce.add(order.orderId);
    console.log(`billing  !! ${order.orderId}: payment provider timed out -> dead letter, replayed later`);
    throw new Error('payment provider timed out');
  }
  // Only an operator's replay reaches a flagged order again (a permanent error is never retried by itself).
  if (n % 10 === 6 && !replay) {
    console.log(
      `billing  !! ${order.orderId}: flagged by the fraud check -> dead letter; replay it in the console at ${server.url}/`,
    );
    throw new PermanentError('fraud check flagged the order for review: approve it by replaying it');
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
  `Surety demo: orders -> outbox (orders.sqlite) -> relay -> embedded log -> billing (inbox, dead letters, replay in billing.sqlite). Data in ${dataDir}. Ctrl-C to stop.`,
);
console.log(`Operations console: ${server.url}/ (stores: orders, billing)`);
console.log(`  operator token: ${operatorToken}`);
console.log(`  viewer token:   ${viewerToken}`);
console.log('  (tokens made up for this run, valid until it stops; paste one into the sign-in form)');
const timer = setInterval(() => void placeOrder(), intervalMs);

/** The SQLite file `<name>.sqlite` with Surety's tables and the service's own table. */
async function openDatabase(name: string, createTable: string): Promise<SqliteStore> {
  const db = await createSqliteStore({ path: join(dataDir, `${name}.sqlite`) });
  await db.migrate();
  await db.transaction((tx) => tx.query(createTable));
  return db;
}

/** Listens on `port`; if the default is taken, on the next free port. */
async function startConsole(options: Parameters<typeof startAdminServer>[0]): Promise<AdminServer> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startAdminServer({ ...options, port: port === 0 ? 0 : port + attempt });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0 || attempt >= 20) throw err;
    }
  }
}

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
  await server.close();
  await relay.stop();
  await replayJob.stop();
  await consumer.stop();
  await probe.close();
  await transport.close();
  const stats = await orders.outbox.stats();
  const letters = await billing.deadLetters.countDeadLetters('billing');
  await orders.close();
  await billing.close();
  const secs = ((Date.now() - startedAt) / 1000).toFixed(1);
  console.log(
    `done: ${produced} orders produced, ${invoiced} invoiced in ${secs}s; outbox ${stats.pending} pending, ${stats.sent} sent, ${stats.dead} dead; dead letters ${letters.resolved} resolved, ${letters.pending + letters.replaying} waiting, ${letters.dead} dead`,
  );
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
