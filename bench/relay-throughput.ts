/**
 * `npm run bench`: relay throughput PostgreSQL -> RabbitMQ quorum queue (persistent, confirmed,
 * 1 KiB payloads), side by side in one run with
 *   - a raw amqplib confirm-publish baseline (1,000 unconfirmed in flight), and
 *   - a naive relay (claim 500, publish, wait for all confirms, mark sent, repeat);
 * plus commit-to-confirm latency through the fast path (NOTIFY) at a steady 200 msg/s, and the extra
 * cost of an outbox insert in a one-row business transaction (next to the cost of an empty statement,
 * the floor for any extra round trip), with the NOTIFY in the transaction (your own transaction) and
 * after it (outbox.transaction), with the add issued together with the business INSERT (pipelined,
 * one round trip for both), and with the row handed to a relay in the process; and how many such
 * transactions 16 concurrent producers commit per second either way. The Surety relay runs with PostgreSQL's locked claims and, for comparison, with
 * the lease claims MySQL and SQLite use.
 * Env: BENCH_MESSAGES (default 50000), BENCH_LATENCY_SECONDS (default 10), BENCH_PRODUCERS (default 16).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import amqp from 'amqplib';
import pg from 'pg';
import { createEnvelope } from '../src/core/envelope.js';
import { silentLogger } from '../src/core/logger.js';
import { encodeEnvelope } from '../src/core/wire.js';
import { Outbox } from '../src/producer/outbox.js';
import { OutboxRelay } from '../src/producer/outbox-relay.js';
import type { SqlExecutor } from '../src/ports/sql-executor.js';
import type { RelayOptions } from '../src/producer/relay-options.js';
import { wireFromRow } from '../src/producer/outbox-rows.js';
import { createPostgresStore, type PostgresStore } from '../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../src/transports/rabbitmq/index.js';
import { startCpuMeter, type CpuPerMessage } from './cpu-usage.js';

const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 16);
const PG_URL = process.env.SURETY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AMQP_URL = process.env.SURETY_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const N = Number(process.env.BENCH_MESSAGES ?? 50_000);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);
const PAYLOAD = { data: 'x'.repeat(1024 - 11) }; // serialises to 1 KiB
const BODY = Buffer.from(JSON.stringify(PAYLOAD));
const tag = `bench_${Date.now().toString(36)}`;
const EXCHANGE = tag;
const QUEUE = `${tag}_q`;

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

/** A contender's messages per second, and the CPU each message cost (undefined without /proc). */
interface Throughput {
  readonly rate: number;
  readonly cpu: CpuPerMessage | undefined;
}
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  const admin = await conn.createChannel();
  await admin.assertExchange(EXCHANGE, 'topic', { durable: true });
  await admin.assertQueue(QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await admin.bindQueue(QUEUE, EXCHANGE, '#');
  const pool = new pg.Pool({ connectionString: PG_URL, max: PRODUCERS + 4 });
  const store = await createPostgresStore({ pool, schema: tag });
  await store.migrate();
  const outbox = new Outbox({ store });
  // The relays run as deployed: on the store's own pool (pipelined), not on the producers' pool.
  const relayStore =
    process.env.BENCH_RELAY_POOL === 'plain'
      ? store
      : await createPostgresStore({ connectionString: PG_URL, schema: tag });

  try {
    console.log(
      `Surety relay benchmark: ${N} messages of 1 KiB, PostgreSQL -> RabbitMQ quorum queue, persistent, confirmed\n`,
    );
    const raw = await rawBaseline(conn, N);
    await admin.purgeQueue(QUEUE);
    const rawWire = await rawBaseline(conn, N, true);
    await admin.purgeQueue(QUEUE);
    const naive = await naiveRelay(store, outbox, N);
    await admin.purgeQueue(QUEUE);
    const relay = await suretyRelay(store, relayStore, outbox, N);
    await admin.purgeQueue(QUEUE);
    const leaseRelay = await suretyRelay(store, relayStore, outbox, N, { lockedClaims: false });
    await admin.purgeQueue(QUEUE);
    console.log('throughput (msg/s)');
    console.log(`  raw amqplib confirm baseline  ${raw.rate}`);
    console.log(`  raw, same wire headers        ${rawWire.rate}`);
    console.log(`  naive relay                   ${naive.rate}`);
    console.log(`  Surety relay                  ${relay.rate}   (locked claims, PostgreSQL's default)`);
    console.log(`  Surety relay, lease claims    ${leaseRelay.rate}   (as on MySQL and SQLite)`);
    console.log(`  Surety / raw                  ${(relay.rate / raw.rate).toFixed(2)}   (target >= 0.85)`);
    console.log(`  Surety / raw with headers     ${(relay.rate / rawWire.rate).toFixed(2)}`);
    console.log(`  Surety / naive                ${(relay.rate / naive.rate).toFixed(2)}   (target >= 1.6)`);
    console.log(`  Surety lease claims / naive   ${(leaseRelay.rate / naive.rate).toFixed(2)}\n`);
    printCpu([
      ['raw amqplib confirm baseline', raw],
      ['raw, same wire headers', rawWire],
      ['naive relay', naive],
      ['Surety relay', relay],
      ['Surety relay, lease claims', leaseRelay],
    ]);

    const lat = await fastPathLatency(store, outbox);
    await admin.purgeQueue(QUEUE);
    console.log(
      `fast path, commit -> broker confirm at 200 msg/s for ${LATENCY_SECONDS}s (${lat.n} messages, relay in another process, woken only by NOTIFY)`,
    );
    const handed = await inProcessFastPath(relayStore);
    await admin.purgeQueue(QUEUE);
    const brokerLat = await rawConfirmLatency(conn);
    await admin.purgeQueue(QUEUE);
    console.log(
      `  p50 ${lat.p50.toFixed(2)} ms   p99 ${lat.p99.toFixed(2)} ms   max ${lat.max.toFixed(2)} ms   (target p99 < 10 ms)`,
    );
    console.log(
      `  relay in the producer's process, handed each commit (outbox.transaction): p50 ${handed.p50.toFixed(2)} ms   p99 ${handed.p99.toFixed(2)} ms   max ${handed.max.toFixed(2)} ms   (target p99 < 10 ms)`,
    );
    console.log(
      `  the broker alone, publish -> confirm at the same pace: p50 ${brokerLat.p50.toFixed(2)} ms   p99 ${brokerLat.p99.toFixed(2)} ms   max ${brokerLat.max.toFixed(2)} ms\n`,
    );

    // On the store's own pool, as deployed (pipelined unless BENCH_RELAY_POOL=plain): statements issued at
    // once share a round trip.
    const cost = await insertOverhead(relayStore, new Outbox({ store: relayStore }));
    const sharing = relayStore === store ? 'but one after the other on this plain pool' : 'one round trip for both';
    const extra = (ms: number) => `+${((ms / cost.plain - 1) * 100).toFixed(1)} %`;
    console.log('outbox insert cost in a one-row business transaction (mean of 3,000 rounds, each in a random order)');
    console.log(`  business transaction alone              ${cost.plain.toFixed(3)} ms`);
    console.log(
      `  with outbox.add, NOTIFY in it           ${cost.withOutbox.toFixed(3)} ms   ${extra(cost.withOutbox)}   (your own transaction)`,
    );
    console.log(
      `  with outbox.add, NOTIFY after commit    ${cost.withOutboxTx.toFixed(3)} ms   ${extra(cost.withOutboxTx)}   (outbox.transaction)`,
    );
    console.log(
      `  the same, add issued with the INSERT    ${cost.atOnce.toFixed(3)} ms   ${extra(cost.atOnce)}   (Promise.all, ${sharing}; target < 15 %)`,
    );
    console.log(
      `  with outbox.add, relay in this process  ${cost.handed.toFixed(3)} ms   ${extra(cost.handed)}   (outbox.transaction handing the row over: leased insert, checked before the commit)`,
    );
    console.log(
      `  with an empty SELECT 1                  ${cost.withRoundTrip.toFixed(3)} ms   ${extra(cost.withRoundTrip)}   (the floor of any extra statement)`,
    );
    const concurrent = await concurrentProducers(store, outbox);
    console.log(`${PRODUCERS} producers at once, one-row business transaction + outbox.add each (transactions/s)`);
    console.log(`  NOTIFY in the transaction               ${concurrent.inTransaction}`);
    console.log(
      `  NOTIFY after commit (outbox.transaction) ${concurrent.afterCommit}   (${(concurrent.afterCommit / concurrent.inTransaction).toFixed(2)} x)\n`,
    );
  } finally {
    await admin.deleteQueue(QUEUE).catch(() => undefined);
    await admin.deleteExchange(EXCHANGE).catch(() => undefined);
    await conn.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
    if (relayStore !== store) await relayStore.close();
    await store.close();
    await pool.end();
  }
}

/** CPU per message of each contender, by process (Linux only). */
function printCpu(rows: [label: string, t: Throughput][]): void {
  if (rows.some(([, t]) => !t.cpu)) return;
  const heads = ['RabbitMQ', 'PostgreSQL', 'this process', 'other', 'total', 'cores busy'];
  const line = (label: string, cells: string[]) =>
    console.log(`  ${label.padEnd(30)}${cells.map((c, i) => c.padStart(heads[i]!.length + 2)).join('')}`);
  console.log('CPU per message (microseconds, all processes of each kind; the relays run in this process)');
  line('', heads);
  for (const [label, { cpu }] of rows) {
    const c = cpu!;
    const total = (c.rabbitmq ?? 0) + (c.postgres ?? 0) + c.self + c.other;
    const us = [c.rabbitmq, c.postgres, c.self, c.other, total];
    line(label, [...us.map((v) => (v === undefined ? 'not seen' : v.toFixed(0))), c.coresBusy.toFixed(2)]);
  }
  console.log();
}

/**
 * Raw amqplib: a confirm channel with at most 1,000 unconfirmed publishes. `withWireHeaders` sends the
 * same properties and headers Surety's wire form carries, for a like-for-like comparison.
 */
async function rawBaseline(conn: amqp.ChannelModel, n: number, withWireHeaders = false): Promise<Throughput> {
  const wire = encodeEnvelope(createEnvelope({ type: 'bench.event', payload: PAYLOAD }));
  const ch = await conn.createConfirmChannel();
  let inFlight = 0;
  let confirmed = 0;
  let wake: (() => void) | undefined;
  const cpu = startCpuMeter();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    while (inFlight >= 1_000) await new Promise<void>((r) => (wake = r));
    inFlight++;
    const props = withWireHeaders
      ? { headers: wire.headers, type: 'bench.event', timestamp: Math.floor(Date.now() / 1000) }
      : {};
    ch.publish(
      EXCHANGE,
      'bench',
      BODY,
      { persistent: true, mandatory: true, messageId: String(i), contentType: 'application/json', ...props },
      (err) => {
        if (err) throw err;
        inFlight--;
        confirmed++;
        wake?.();
        wake = undefined;
      },
    );
  }
  await ch.waitForConfirms();
  const ms = performance.now() - start;
  const used = cpu.stop(n);
  await ch.close();
  if (confirmed !== n) throw new Error(`raw baseline confirmed ${confirmed} of ${n}`);
  return { rate: rate(n, ms), cpu: used };
}

async function fill(store: PostgresStore, outbox: Outbox, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1_000) {
    await store.transaction(async (tx) => {
      for (let j = i; j < Math.min(n, i + 1_000); j++) await outbox.add(tx, { type: 'bench.event', payload: PAYLOAD });
    });
  }
  await store.pool.query(`ANALYZE ${store.outbox.outboxTable}`);
}

async function clear(store: PostgresStore): Promise<void> {
  await store.pool.query(`TRUNCATE ${store.outbox.outboxTable}`);
}

/** Claim 500, publish them, wait for every confirm, mark sent, repeat. */
async function naiveRelay(store: PostgresStore, outbox: Outbox, n: number): Promise<Throughput> {
  await clear(store);
  await fill(store, outbox, n);
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange: EXCHANGE, declareExchange: false });
  await transport.waitUntilReady(10_000);
  const cpu = startCpuMeter();
  const start = performance.now();
  let sent = 0;
  for (;;) {
    const rows = await store.outbox.claim({
      owner: 'naive',
      limit: 500,
      now: Date.now(),
      leaseMs: 60_000,
      ordered: false,
    });
    if (rows.length === 0) break;
    await Promise.all(rows.map((r) => transport.publish({ topic: r.topic, message: wireFromRow(r) })));
    sent += await store.outbox.markSent(
      rows.map((r) => r.seq),
      Date.now(),
    );
  }
  const ms = performance.now() - start;
  const used = cpu.stop(n);
  await transport.close();
  if (sent !== n) throw new Error(`naive relay sent ${sent} of ${n}`);
  return { rate: rate(n, ms), cpu: used };
}

async function suretyRelay(
  store: PostgresStore,
  relayStore: PostgresStore,
  outbox: Outbox,
  n: number,
  mode: Pick<RelayOptions, 'lockedClaims'> = {},
): Promise<Throughput> {
  await clear(store);
  await fill(store, outbox, n);
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange: EXCHANGE, declareExchange: false });
  let confirmed = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const relay = new OutboxRelay({
    store: relayStore,
    publisher: transport,
    logger: silentLogger,
    retention: false,
    listen: false,
    ...mode,
    onConfirmed: () => {
      if (++confirmed === n) done();
    },
  });
  const cpu = startCpuMeter();
  const start = performance.now();
  await relay.start();
  await finished;
  const ms = performance.now() - start;
  const used = cpu.stop(n);
  await relay.stop();
  await transport.close();
  const stats = await store.outbox.stats();
  if (stats.sent !== n) throw new Error(`Surety relay marked ${stats.sent} of ${n} sent`);
  return { rate: rate(n, ms), cpu: used };
}

/**
 * Commits one message every 5 ms while a relay in another process, woken only by NOTIFY, publishes
 * them. Latency = that process's confirm time - this process's commit time (same machine clock).
 */
async function fastPathLatency(store: PostgresStore, outbox: Outbox) {
  await clear(store);
  const child = fork(
    fileURLToPath(new URL('./fast-path-relay.ts', import.meta.url)),
    [PG_URL, tag, AMQP_URL, EXCHANGE],
    {
      execArgv: ['--import', 'tsx'],
    },
  );
  const confirmedAt = new Map<string, number>();
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; id?: string; at?: number }) => {
      if (m.ready) resolve();
      else confirmedAt.set(m.id!, m.at!);
    });
    child.once('exit', (code) => reject(new Error(`fast-path relay exited with ${code}`)));
  });
  const committedAt = await commitAtPace(
    () => store.transaction(async (tx) => (await outbox.add(tx, { type: 'bench.event', payload: PAYLOAD })).messageId),
    confirmedAt,
  );
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
  return latencyOf(committedAt, confirmedAt);
}

/**
 * The same pace with the relay in this process, given the outbox: outbox.transaction hands it each
 * committed row, published at once without a claim. Latency = confirm time - commit time.
 */
async function inProcessFastPath(store: PostgresStore) {
  await clear(store);
  const outbox = new Outbox({ store }); // the relay's own store: it is handed only rows of that very store
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange: EXCHANGE, declareExchange: false });
  await transport.waitUntilReady(10_000);
  const confirmedAt = new Map<string, number>();
  const relay = new OutboxRelay({
    store,
    publisher: transport,
    outbox,
    logger: silentLogger,
    retention: false,
    listen: false,
    pollIntervalMs: 60_000, // a poll would hide a broken handoff
    onConfirmed: (row) => confirmedAt.set(row.messageId, performance.timeOrigin + performance.now()),
  });
  await relay.start();
  const committedAt = await commitAtPace(
    () => outbox.transaction(async (tx) => (await outbox.add(tx, { type: 'bench.event', payload: PAYLOAD })).messageId),
    confirmedAt,
  );
  await relay.stop();
  await transport.close();
  return latencyOf(committedAt, confirmedAt);
}

/**
 * Commits one message every 5 ms for LATENCY_SECONDS with `commit`, then waits up to 10 s for their
 * confirms to show in `confirmedAt`. Returns each message's commit time (machine clock, ms).
 */
async function commitAtPace(
  commit: () => Promise<string>,
  confirmedAt: ReadonlyMap<string, number>,
): Promise<Map<string, number>> {
  const committedAt = new Map<string, number>();
  const total = 200 * LATENCY_SECONDS;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + i * 5 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = await commit();
    committedAt.set(id, performance.timeOrigin + performance.now());
  }
  const deadline = Date.now() + 10_000;
  while (confirmedAt.size < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return committedAt;
}

/** Commit-to-confirm latency of the messages confirmed. */
function latencyOf(committedAt: ReadonlyMap<string, number>, confirmedAt: ReadonlyMap<string, number>) {
  const latencies = [...committedAt].filter(([id]) => confirmedAt.has(id)).map(([id, t]) => confirmedAt.get(id)! - t);
  latencies.sort((a, b) => a - b);
  return { n: latencies.length, p50: pct(latencies, 50), p99: pct(latencies, 99), max: latencies.at(-1) ?? NaN };
}

/** Publish -> confirm of single persistent messages, one every 5 ms, on a raw confirm channel. */
async function rawConfirmLatency(conn: amqp.ChannelModel) {
  const ch = await conn.createConfirmChannel();
  const latencies: number[] = [];
  const total = 200 * LATENCY_SECONDS;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + i * 5 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    ch.publish(EXCHANGE, 'bench.event', BODY, { persistent: true }, () => latencies.push(performance.now() - t));
  }
  await ch.waitForConfirms();
  await ch.close();
  latencies.sort((a, b) => a - b);
  return { p50: pct(latencies, 50), p99: pct(latencies, 99), max: latencies.at(-1) ?? NaN };
}

/**
 * A one-row business transaction with and without outbox.add, on one pool. Each round runs every
 * variant once, in a new random order: a fixed order let one variant inherit another's after-effects
 * (a variant timed after the same one every round came out up to 15 % slower or faster).
 */
async function insertOverhead(store: PostgresStore, outbox: Outbox) {
  await clear(store);
  await store.pool.query(
    `CREATE TABLE "${tag}".orders (id BIGSERIAL PRIMARY KEY, customer TEXT NOT NULL, total_cents INT NOT NULL)`,
  );
  const event = { type: 'order.created', payload: { customer: 'ada', totalCents: 1234 } };
  // As with a relay in this process: the row inserted leased to it, checked before the commit, then
  // handed over (taken here without publishing; clear() removes the rows).
  const handing = new Outbox({ store });
  handing.attachHandoff({ owner: 'bench', leaseMs: 60_000, take: () => [] }, store.outbox);
  const variants = {
    plain: () => store.transaction((tx) => business(tx)),
    withOutbox: () =>
      store.transaction(async (tx) => {
        await business(tx);
        await outbox.add(tx, event);
      }),
    withOutboxTx: () =>
      outbox.transaction(async (tx) => {
        await business(tx);
        await outbox.add(tx, event);
      }),
    atOnce: () => outbox.transaction((tx) => Promise.all([business(tx), outbox.add(tx, event)])),
    handed: () =>
      handing.transaction(async (tx) => {
        await business(tx);
        await handing.add(tx, event);
      }),
    withRoundTrip: () =>
      store.transaction(async (tx) => {
        await business(tx);
        await tx.query('SELECT 1');
      }),
  };
  type Variant = keyof typeof variants;
  const names = Object.keys(variants) as Variant[];
  const total = Object.fromEntries(names.map((n) => [n, 0])) as Record<Variant, number>;
  const rounds = 3_000;
  for (let i = 0; i < rounds + 100; i++) {
    for (const name of shuffled(names)) {
      const t = performance.now();
      await variants[name]();
      if (i >= 100) total[name] += performance.now() - t; // the first 100 rounds warm up
      await store.outbox.notificationsSent(); // untimed: the caller does not wait for it, the next run must not either
    }
  }
  return Object.fromEntries(names.map((n) => [n, total[n] / rounds])) as Record<Variant, number>;
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const business = (tx: SqlExecutor) =>
  tx.query(`INSERT INTO "${tag}".orders (customer, total_cents) VALUES ($1, $2)`, ['ada', 1234]);

/** PRODUCERS loops committing business row + outbox row, for 5 s each way. */
async function concurrentProducers(store: PostgresStore, outbox: Outbox) {
  const event = { type: 'order.created', payload: { customer: 'ada', totalCents: 1234 } };
  const measure = async (commit: () => Promise<unknown>) => {
    let n = 0;
    const end = performance.now() + 5_000;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        for (; performance.now() < end; n++) await commit();
      }),
    );
    return Math.round((n / (performance.now() - start)) * 1000);
  };
  const inTransaction = await measure(() =>
    store.transaction(async (tx) => {
      await business(tx);
      await outbox.add(tx, event);
    }),
  );
  const afterCommit = await measure(() =>
    outbox.transaction(async (tx) => {
      await business(tx);
      await outbox.add(tx, event);
    }),
  );
  return { inTransaction, afterCommit };
}

await main();
