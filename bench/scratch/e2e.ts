/**
 * Throwaway measurements (not part of `npm run bench`). Parent: the producer. Children: a relay and a
 * consumer, each in its own process, recording per-message stage times (machine clock, ms) that they
 * send back once at the end.
 *   tsx bench/scratch/e2e.ts            all scenarios
 * Env: E2E_SECONDS (default 10), E2E_RATE (default 200), E2E_REPS (default 2), E2E_ONLY (comma list).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import amqp from 'amqplib';
import { Consumer } from '../../src/consumer/consumer.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { OutboxRelayStore } from '../../src/ports/outbox-store.js';
import type { Publisher } from '../../src/ports/transport.js';
import { createPostgresOutboxStore, type PostgresOutboxStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport, declareTopology } from '../../src/transports/rabbitmq/index.js';

const PG_URL = process.env.SURETY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AMQP_URL = process.env.SURETY_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const SECONDS = Number(process.env.E2E_SECONDS ?? 10);
const RATE = Number(process.env.E2E_RATE ?? 200);
const REPS = Number(process.env.E2E_REPS ?? 2);
const TYPE = 'bench.event';
const PAYLOAD = { data: 'x'.repeat(1024 - 11) };
const now = () => performance.timeOrigin + performance.now();
type Stamps = Record<string, Record<string, number>>; // stage -> messageId -> time

/** Relay's side: when NOTIFY arrived, claims ran, publishes started and were confirmed. */
async function relayChild(tag: string, exchange: string): Promise<void> {
  const store = await createPostgresOutboxStore({ connectionString: PG_URL, schema: tag });
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange, declareExchange: false });
  await transport.waitUntilReady(10_000);
  const stamps: Stamps = { claimStart: {}, claimEnd: {}, publish: {}, confirm: {} };
  const notifies: number[] = [];
  let open = 0;
  const openAtNotify: number[] = [];
  const claims: { start: number; end: number; rows: number; openAtStart: number }[] = [];
  const s = store as unknown as Record<string, (...a: unknown[]) => unknown>;
  const bound = (name: string) => s[name]!.bind(store);
  const inst: OutboxRelayStore = {
    claim: bound('claim') as OutboxRelayStore['claim'],
    markSent: bound('markSent') as OutboxRelayStore['markSent'],
    recordFailure: bound('recordFailure') as OutboxRelayStore['recordFailure'],
    release: bound('release') as OutboxRelayStore['release'],
    releaseLeased: bound('releaseLeased') as OutboxRelayStore['releaseLeased'],
    purgeSent: bound('purgeSent') as OutboxRelayStore['purgeSent'],
    stats: bound('stats') as OutboxRelayStore['stats'],
    acquireLease: bound('acquireLease') as OutboxRelayStore['acquireLease'],
    async claimLocked(req) {
      const start = now();
      const openAtStart = open;
      open++;
      const batch = await store.claimLocked(req);
      const end = now();
      claims.push({ start, end, rows: batch.rows.length, openAtStart });
      const close = () => open--;
      const settle = batch.settle.bind(batch);
      const release = batch.release.bind(batch);
      let closed = false;
      const once = () => {
        if (!closed) close();
        closed = true;
      };
      if (batch.rows.length === 0) once();
      Object.assign(batch, {
        settle: (...a: Parameters<typeof settle>) => settle(...a).finally(once),
        release: () => release().finally(once),
      });
      for (const r of batch.rows) {
        stamps.claimStart![r.messageId] = start;
        stamps.claimEnd![r.messageId] = end;
      }
      return batch;
    },
    listenForCommits: (onCommit, onError) =>
      store.listenForCommits(() => {
        notifies.push(now());
        openAtNotify.push(open);
        onCommit();
      }, onError),
  };
  const publisher: Publisher = {
    isReady: () => transport.isReady(),
    waitUntilReady: (ms) => transport.waitUntilReady(ms),
    close: () => transport.close(),
    async publish(out) {
      stamps.publish![out.message.id] = now();
      await transport.publish(out);
    },
  };
  const relay = new OutboxRelay({
    store: inst,
    publisher,
    logger: silentLogger,
    retention: false,
    pollIntervalMs: Number(process.env.E2E_POLL ?? 1_000),
    lockedClaims: !process.env.E2E_LEASE,
    ...(process.env.E2E_BATCHES ? { maxLockedBatches: Number(process.env.E2E_BATCHES) } : {}),
    onConfirmed: (row) => (stamps.confirm![row.messageId] = now()),
  });
  await relay.start();
  process.send!({ ready: true });
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    void relay.stop().then(async () => {
      await transport.close();
      await store.close();
      process.send!({ stamps, notifies, claims, openAtNotify }, () => process.exit(0));
    });
  });
}

/** Consumer's side, default options: when the handler ran. */
async function consumerChild(tag: string, exchange: string): Promise<void> {
  const store = await createPostgresOutboxStore({ connectionString: PG_URL, schema: tag });
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange, declareExchange: false });
  const stamps: Stamps = { handler: {} };
  const consumer = new Consumer({ group: `${tag}_c`, store, transport, logger: silentLogger });
  consumer.on(TYPE, async (_payload, { envelope }) => {
    stamps.handler![envelope.id] = now();
  });
  await consumer.start();
  process.send!({ ready: true });
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    void consumer.stop().then(async () => {
      await transport.close();
      await store.close();
      process.send!({ stamps }, () => process.exit(0));
    });
  });
}

function spawn(role: string, tag: string, exchange: string): Promise<ChildProcess> {
  const child = fork(fileURLToPath(import.meta.url), [role, tag, exchange], { execArgv: ['--import', 'tsx'] });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${role} exited ${code}`)));
  });
}

function finish(
  child: ChildProcess,
): Promise<{ stamps: Stamps; notifies?: number[]; claims?: unknown[]; openAtNotify?: unknown }> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as { stamps: Stamps }));
    child.send('stop');
  });
}

/** Commits one message every 1000/RATE ms for SECONDS; each commit's time by message id. */
async function paced(commit: () => Promise<string>, seconds = SECONDS, rate = RATE): Promise<Record<string, number>> {
  const at: Record<string, number> = {};
  const total = rate * seconds;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = await commit();
    at[id] = now();
  }
  return at;
}

/** As many commits as `producers` concurrent loops make in `seconds`. */
async function flat(commit: () => Promise<string>, seconds: number, producers: number) {
  const at: Record<string, number> = {};
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (performance.now() < end) {
        const id = await commit();
        at[id] = now();
      }
    }),
  );
  return at;
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
function dist(from: Record<string, number>, to: Record<string, number>) {
  const xs = Object.keys(from)
    .filter((id) => to[id] !== undefined)
    .map((id) => to[id]! - from[id]!)
    .sort((a, b) => a - b);
  return { n: xs.length, p50: pct(xs, 50), p90: pct(xs, 90), p99: pct(xs, 99), max: xs.at(-1) ?? NaN };
}
const fmt = (d: ReturnType<typeof dist>) =>
  `n ${d.n}  p50 ${d.p50.toFixed(2)}  p90 ${d.p90.toFixed(2)}  p99 ${d.p99.toFixed(2)}  max ${d.max.toFixed(2)}`;

async function waitFor(cond: () => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

async function main(): Promise<void> {
  const tag = `scratch_${Date.now().toString(36)}`;
  const exchange = tag;
  const conn = await amqp.connect(AMQP_URL);
  const admin = await conn.createChannel();
  await admin.assertExchange(exchange, 'topic', { durable: true });
  await declareTopology(admin, {
    queues: [{ name: `${tag}_c` }],
    bindings: [{ exchange, queue: `${tag}_c`, pattern: TYPE }],
  });
  const store = await createPostgresOutboxStore({ connectionString: PG_URL, schema: tag });
  await store.migrate();
  const only = process.env.E2E_ONLY?.split(',');
  const want = (s: string) => !only || only.includes(s);
  try {
    for (let rep = 0; rep < REPS; rep++) {
      if (want('e2e')) await e2e(store, tag, exchange, add(new Outbox({ store })));
      await admin.purgeQueue(`${tag}_c`);
      for (const handoff of process.env.E2E_HANDOFF ? [true, false] : [false])
        if (want('inproc')) await inProcess(store, exchange, handoff, admin, tag);
      if (want('other')) await otherProcess(store, tag, exchange, add(new Outbox({ store })), admin);
    }
  } finally {
    await admin.deleteQueue(`${tag}_c`).catch(() => undefined);
    await admin.deleteExchange(exchange).catch(() => undefined);
    await conn.close();
    await store.pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
    await store.close();
  }
}

async function e2e(store: PostgresOutboxStore, tag: string, exchange: string, commit: () => Promise<string>) {
  const consumer = await spawn('consumer', tag, exchange);
  const relay = await spawn('relay', tag, exchange);
  const committed = await paced(commit);
  await new Promise((r) => setTimeout(r, 1_500)); // the last ones through (not a measurement)
  const r = await finish(relay);
  const c = await finish(consumer);
  const s: Stamps = { commit: committed, ...r.stamps, ...c.stamps };
  console.log(`e2e, relay + consumer in other processes, ${RATE}/s for ${SECONDS}s`);
  console.log(`  commit -> handler     ${fmt(dist(s.commit!, s.handler!))}`);
  console.log(`  commit -> claimStart  ${fmt(dist(s.commit!, s.claimStart!))}`);
  console.log(`  claimStart -> claimEnd ${fmt(dist(s.claimStart!, s.claimEnd!))}`);
  console.log(`  claimEnd -> publish   ${fmt(dist(s.claimEnd!, s.publish!))}`);
  console.log(`  publish -> confirm    ${fmt(dist(s.publish!, s.confirm!))}`);
  console.log(`  confirm -> handler    ${fmt(dist(s.confirm!, s.handler!))}`);
  console.log(`  publish -> handler    ${fmt(dist(s.publish!, s.handler!))}`);
  console.log(`  commit -> confirm     ${fmt(dist(s.commit!, s.confirm!))}`);
  const claims = r.claims as { start: number; end: number; rows: number }[];
  const sizes = claims.map((c) => c.rows).sort((a, b) => a - b);
  console.log(
    `  claims ${claims.length}, rows per claim p50 ${pct(sizes, 50)} max ${sizes.at(-1)}, notifies ${r.notifies!.length}`,
  );
  const hist = (xs: number[]) => xs.reduce<Record<number, number>>((h, x) => ((h[x] = (h[x] ?? 0) + 1), h), {});
  console.log(`  open batches+claims at NOTIFY ${JSON.stringify(hist(r.openAtNotify as number[]))}`);
  console.log(
    `  open at claim start ${JSON.stringify(hist(claims.map((c) => (c as unknown as { openAtStart: number }).openAtStart)))}`,
  );
  // The slowest 1 %: which stage took most of it.
  const ids = Object.keys(s.commit!).filter((id) => s.handler![id] !== undefined);
  ids.sort((a, b) => s.handler![a]! - s.commit![a]! - (s.handler![b]! - s.commit![b]!));
  const tail = ids.slice(Math.floor(ids.length * 0.99));
  const stage = (from: string, to: string) =>
    tail.map((id) => s[to]![id]! - s[from]![id]!).reduce((a, b) => a + b, 0) / tail.length;
  console.log(
    `  slowest 1 % (mean ms): commit->claim ${stage('commit', 'claimStart').toFixed(1)}, claim ${stage('claimStart', 'claimEnd').toFixed(1)}, ->publish ${stage('claimEnd', 'publish').toFixed(1)}, ->confirm ${stage('publish', 'confirm').toFixed(1)}, confirm->handler ${stage('confirm', 'handler').toFixed(1)}`,
  );
}

async function inProcess(
  store: PostgresOutboxStore,
  exchange: string,
  handoff: boolean,
  admin: amqp.Channel,
  tag: string,
) {
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange, declareExchange: false });
  await transport.waitUntilReady(10_000);
  const outbox = new Outbox({ store });
  const confirmed: Record<string, number> = {};
  const relay = new OutboxRelay({
    store,
    publisher: transport,
    outbox,
    ...(handoff ? ({ handoff } as object) : {}), // the option of the code before the handoff was dropped
    logger: silentLogger,
    retention: false,
    onConfirmed: (row) => (confirmed[row.messageId] = now()),
  });
  await relay.start();
  const lat = await paced(add(outbox));
  await waitFor(() => Object.keys(confirmed).length >= Object.keys(lat).length);
  const tput = await measureFlat(add(outbox), confirmed);
  await relay.stop();
  await transport.close();
  await admin.purgeQueue(`${tag}_c`);
  console.log(`relay in the producer's process, handoff ${handoff ? 'on ' : 'off'}`);
  console.log(`  ${RATE}/s commit -> confirm  ${fmt(dist(lat, confirmed))}`);
  console.log(`  16 producers: ${tput}`);
}

function add(outbox: Outbox) {
  return () => outbox.transaction(async (tx) => (await outbox.add(tx, { type: TYPE, payload: PAYLOAD })).messageId);
}

async function measureFlat(commit: () => Promise<string>, confirmed: Record<string, number>) {
  const seconds = Number(process.env.E2E_FLAT_SECONDS ?? 5);
  const t0 = performance.now();
  const at = await flat(commit, seconds, 16);
  await waitFor(() => Object.keys(at).every((id) => confirmed[id] !== undefined));
  const ms = performance.now() - t0;
  const n = Object.keys(at).length;
  const d = dist(at, confirmed);
  return `${Math.round(n / seconds)} commits/s, all confirmed after ${(ms / 1000).toFixed(2)} s (${Math.round((n * 1000) / ms)} msg/s end to end), commit -> confirm p50 ${d.p50.toFixed(1)} p99 ${d.p99.toFixed(1)}`;
}

async function otherProcess(
  store: PostgresOutboxStore,
  tag: string,
  exchange: string,
  commit: () => Promise<string>,
  admin: amqp.Channel,
) {
  const relay = await spawn('relay', tag, exchange);
  const lat = await paced(commit);
  await new Promise((r) => setTimeout(r, 1_000));
  const seconds = Number(process.env.E2E_FLAT_SECONDS ?? 5);
  const t0 = performance.now();
  const at = await flat(commit, seconds, 16);
  // No live view of the child's confirms: wait until the table has nothing pending.
  for (;;) {
    const st = await store.stats();
    if (st.pending === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - t0;
  console.error('other: drained');
  const r = await finish(relay);
  console.error('other: finished');
  await admin.purgeQueue(`${tag}_c`);
  const n = Object.keys(at).length;
  const d = dist(at, r.stamps.confirm!);
  console.log('relay in another process (NOTIFY)');
  console.log(`  ${RATE}/s commit -> confirm  ${fmt(dist(lat, r.stamps.confirm!))}`);
  console.log(
    `  16 producers: ${Math.round(n / seconds)} commits/s, all sent after ${(ms / 1000).toFixed(2)} s (${Math.round((n * 1000) / ms)} msg/s), commit -> confirm p50 ${d.p50.toFixed(1)} p99 ${d.p99.toFixed(1)}`,
  );
}

const [role, tag, exchange] = process.argv.slice(2);
if (role === 'relay') await relayChild(tag!, exchange!);
else if (role === 'consumer') await consumerChild(tag!, exchange!);
else await main();
