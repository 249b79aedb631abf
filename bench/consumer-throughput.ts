/**
 * Consumer throughput: RabbitMQ quorum queue (persistent, 1 KiB JSON in Surety's wire format) ->
 * PostgreSQL, side by side in one run. Before each contender the queue is pre-filled with N messages
 * through a raw confirm channel; then the time to drain it is measured for
 *   - a bare amqplib consumer that only acks (prefetch 1,000, manual ack),
 *   - a naive consumer (amqplib + pg, one message at a time: BEGIN, INSERT effect, COMMIT, ack), and
 *   - Surety's exactly-once Consumer (inbox + effect row per message, batches in one transaction),
 *     with a per-message handler (one INSERT each, one handler at a time as by default, then
 *     BENCH_HANDLER_CONCURRENCY at once on the pipelined pool) and with a batch handler (one multi-row INSERT);
 * plus the rate at which a ReplayJob resolves due dead letters seeded straight into the store's table.
 * Env: BENCH_MESSAGES (default 20000), BENCH_BATCH_SIZE (default 100), BENCH_PARALLELISM (consumer lanes,
 * default 1), BENCH_HANDLER_CONCURRENCY (default 16), BENCH_REPLAY_ROWS (default 100000).
 */
import amqp from 'amqplib';
import pg from 'pg';
import { Consumer } from '../src/consumer/consumer.js';
import { ReplayJob } from '../src/consumer/replay-job.js';
import { createEnvelope, newMessageId } from '../src/core/envelope.js';
import { CONTENT_TYPE, encodeEnvelope, WIRE_HEADERS } from '../src/core/wire.js';
import type { Subscriber } from '../src/ports/transport.js';
import { createPostgresStore, type PostgresStore } from '../src/stores/postgres/index.js';
import { createRabbitMqTransport, declareTopology, parkingQueueName } from '../src/transports/rabbitmq/index.js';

const PG_URL = process.env.SURETY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AMQP_URL = process.env.SURETY_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const N = Number(process.env.BENCH_MESSAGES ?? 20_000);
const BATCH_SIZE = Number(process.env.BENCH_BATCH_SIZE ?? 100);
const PARALLELISM = Number(process.env.BENCH_PARALLELISM ?? 1);
const HANDLER_CONCURRENCY = Number(process.env.BENCH_HANDLER_CONCURRENCY ?? 16);
const REPLAY_ROWS = Number(process.env.BENCH_REPLAY_ROWS ?? 100_000);
const PREFETCH = 1_000;
// ReplayJob caps ratePerSecond at 1,000,000 (its option schema); that is "unlimited" for this run.
const REPLAY = { ratePerSecond: 1_000_000, batchSize: 1_000, concurrency: 100 } as const;
const TYPE = 'bench.event';
const PAYLOAD = { data: 'x'.repeat(1024 - 11) }; // serialises to 1 KiB
const tag = `bench_${Date.now().toString(36)}`;
const EXCHANGE = tag;
const GROUP = `${tag}_consumer`; // the RabbitMQ transport consumes the queue named like the group
const EFFECTS = `"${tag}".effects`;
const INSERT_EFFECT = `INSERT INTO ${EFFECTS} (id, payload) VALUES ($1, $2)`;
const INSERT_EFFECTS = `INSERT INTO ${EFFECTS} (id, payload) SELECT * FROM unnest($1::uuid[], $2::jsonb[])`;

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

async function main(): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  const admin = await conn.createChannel();
  await admin.assertExchange(EXCHANGE, 'topic', { durable: true });
  // As the consumer's subscription declares it: quorum, with its dead-letter parking queue.
  await declareTopology(admin, {
    queues: [{ name: GROUP }],
    bindings: [{ exchange: EXCHANGE, queue: GROUP, pattern: TYPE }],
  });
  // Pipelined like the pool the store creates itself; sequential statements behave as on a plain pool.
  const pool = new pg.Pool({ connectionString: PG_URL, max: 8, pipeline: true } as pg.PoolConfig);
  pool.on('error', () => undefined); // an idle client's error (server restart) must not skip the cleanup
  const store = await createPostgresStore({ pool, schema: tag });
  await store.migrate();
  await pool.query(`CREATE TABLE ${EFFECTS} (id UUID PRIMARY KEY, payload JSONB NOT NULL)`);

  try {
    console.log(
      `Surety consumer benchmark: ${N} messages of 1 KiB, RabbitMQ quorum queue (persistent, pre-filled) -> PostgreSQL\n` +
        `each contender drains the whole queue; effect = one row in ${EFFECTS}, committed before the ack\n`,
    );
    await prefill(conn, N);
    const bare = await bareConsumer(conn, N);
    await prefill(conn, N);
    const naive = await naiveConsumer(conn, pool, N);
    await prefill(conn, N);
    const { consumer, msgPerSec: surety } = await suretyConsumer(store, pool, N, 'one');
    await prefill(conn, N);
    const { msgPerSec: suretyConcurrent } = await suretyConsumer(store, pool, N, 'concurrent');
    await prefill(conn, N);
    const { msgPerSec: suretyBatch } = await suretyConsumer(store, pool, N, 'batch');
    const ratios = (label: string, v: number) =>
      console.log(`  ${label.padEnd(31)} ${(v / naive).toFixed(2)} x naive   ${(v / bare).toFixed(2)} of bare`);
    console.log('throughput (msg/s)');
    console.log(`  bare amqplib, ack only          ${bare}`);
    console.log(`  naive BEGIN/INSERT/COMMIT/ack   ${naive}`);
    console.log(
      `  Surety consumer                 ${surety}   (batch ${BATCH_SIZE}, ${PARALLELISM} lane(s), one handler at a time)`,
    );
    console.log(
      `  Surety, concurrent handlers     ${suretyConcurrent}   (handlerConcurrency ${HANDLER_CONCURRENCY}, statements pipelined)`,
    );
    console.log(`  Surety, batch handler           ${suretyBatch}   (onBatch: one multi-row INSERT per batch)`);
    console.log('ratios (targets: >= 3 x naive, >= 0.3 of bare)');
    ratios('Surety consumer', surety);
    ratios('Surety, concurrent handlers', suretyConcurrent);
    ratios('Surety, batch handler', suretyBatch);
    console.log();

    const replay = await replayRate(store, pool, consumer, REPLAY_ROWS);
    console.log(
      `replay of ${REPLAY_ROWS} due dead letters (ReplayJob.runOnce, batchSize ${REPLAY.batchSize}, concurrency ${REPLAY.concurrency}, no rate limit)`,
    );
    console.log(`  seeded in ${(replay.seedMs / 1000).toFixed(1)} s, replayed in ${(replay.ms / 1000).toFixed(1)} s`);
    console.log(`  ${rate(REPLAY_ROWS, replay.ms)} rows/s`);
  } finally {
    await admin.deleteQueue(GROUP).catch(() => undefined);
    await admin.deleteQueue(parkingQueueName(GROUP)).catch(() => undefined);
    await admin.deleteExchange(EXCHANGE).catch(() => undefined);
    await conn.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
    await store.close();
    await pool.end();
  }
}

/** Publishes n fresh envelopes (wire headers, persistent) with at most 1,000 unconfirmed; waits until queued. */
async function prefill(conn: amqp.ChannelModel, n: number): Promise<void> {
  const ch = await conn.createConfirmChannel();
  let inFlight = 0;
  let wake: (() => void) | undefined;
  for (let i = 0; i < n; i++) {
    while (inFlight >= 1_000) await new Promise<void>((r) => (wake = r));
    inFlight++;
    const wire = encodeEnvelope(createEnvelope({ type: TYPE, payload: PAYLOAD }));
    const options = {
      persistent: true,
      mandatory: true,
      messageId: wire.id,
      contentType: CONTENT_TYPE,
      type: TYPE,
      timestamp: Math.floor(Date.now() / 1000),
      headers: wire.headers,
    };
    ch.publish(EXCHANGE, TYPE, wire.body, options, (err) => {
      if (err) throw err;
      inFlight--;
      wake?.();
      wake = undefined;
    });
  }
  await ch.waitForConfirms();
  for (let tries = 0; (await ch.checkQueue(GROUP)).messageCount !== n; tries++) {
    if (tries === 100) throw new Error(`queue ${GROUP} did not reach ${n} messages`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await ch.close();
}

async function bareConsumer(conn: amqp.ChannelModel, n: number): Promise<number> {
  const ch = await conn.createChannel();
  await ch.prefetch(PREFETCH);
  let acked = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const start = performance.now();
  const { consumerTag } = await ch.consume(GROUP, (msg) => {
    if (!msg) return;
    ch.ack(msg);
    if (++acked === n) done();
  });
  await finished;
  const ms = performance.now() - start;
  await ch.cancel(consumerTag);
  await ch.close();
  return rate(n, ms);
}

/** The loop most hand-written consumers are: one message at a time, one transaction each, then ack. */
async function naiveConsumer(conn: amqp.ChannelModel, pool: pg.Pool, n: number): Promise<number> {
  const client = await pool.connect();
  const ch = await conn.createChannel();
  await ch.prefetch(PREFETCH);
  const buffered: amqp.ConsumeMessage[] = [];
  let wake: (() => void) | undefined;
  const start = performance.now();
  const { consumerTag } = await ch.consume(GROUP, (msg) => {
    if (!msg) return;
    buffered.push(msg);
    wake?.();
    wake = undefined;
  });
  for (let handled = 0; handled < n; handled++) {
    while (buffered.length === 0) await new Promise<void>((r) => (wake = r));
    const msg = buffered.shift()!;
    await client.query('BEGIN');
    await client.query(INSERT_EFFECT, [msg.properties.messageId, JSON.parse(msg.content.toString('utf8'))]);
    await client.query('COMMIT');
    ch.ack(msg);
  }
  const ms = performance.now() - start;
  await ch.cancel(consumerTag);
  await ch.close();
  client.release();
  await expectEffects(pool, n, 'naive consumer');
  return rate(n, ms);
}

async function suretyConsumer(store: PostgresStore, pool: pg.Pool, n: number, variant: 'one' | 'concurrent' | 'batch') {
  const transport = await createRabbitMqTransport({ url: AMQP_URL, exchange: EXCHANGE, declareExchange: false });
  await transport.waitUntilReady(10_000);
  let settled = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  // The consumer's delivery handler resolves once the message is committed and acked: count those.
  const counting: Subscriber = {
    subscribe: (options, handler) =>
      transport.subscribe(options, async (delivery) => {
        await handler(delivery);
        if (++settled === n) done();
      }),
  };
  const consumer = new Consumer({
    group: GROUP,
    store,
    transport: counting,
    prefetch: PREFETCH,
    batchSize: BATCH_SIZE,
    parallelism: PARALLELISM,
    handlerConcurrency: variant === 'concurrent' ? HANDLER_CONCURRENCY : 1,
  });
  if (variant === 'batch')
    consumer.onBatch(TYPE, async (messages, { tx }) => {
      await tx.query(INSERT_EFFECTS, [
        messages.map((m) => m.envelope.id),
        messages.map((m) => JSON.stringify(m.payload)),
      ]);
    });
  else
    consumer.on(TYPE, async (payload, { tx, envelope }) => {
      await tx.query(INSERT_EFFECT, [envelope.id, payload]);
    });
  const start = performance.now();
  await consumer.start();
  await finished;
  const ms = performance.now() - start;
  await consumer.stop();
  await transport.close();
  await expectEffects(pool, n, 'Surety consumer');
  return { consumer, msgPerSec: rate(n, ms) };
}

/** Seeds `rows` due dead letters with multi-row INSERTs, then replays them until none is pending. */
async function replayRate(store: PostgresStore, pool: pg.Pool, consumer: Consumer, rows: number) {
  const wire = encodeEnvelope(createEnvelope({ type: TYPE, payload: PAYLOAD }));
  const now = Date.now();
  const shared = [
    GROUP,
    TYPE,
    TYPE,
    wire.headers[WIRE_HEADERS.key],
    JSON.stringify(wire.headers),
    wire.body.toString('utf8'),
    now - 60_000,
    now,
  ];
  const seedStart = performance.now();
  for (let i = 0; i < rows; i += 2_000) {
    const ids = Array.from({ length: Math.min(2_000, rows - i) }, () => newMessageId());
    const values = ids.map(
      (_, j) =>
        `($${shared.length + j + 1}, $1, $2, $3, $4, 1, $5, $6, 'utf8', 'pending', 1, $7, 'seeded', false, $8, $8)`,
    );
    await pool.query(
      `INSERT INTO ${store.tables.deadLetters} (message_id, group_name, topic, type, msg_key, version, headers, body,
        body_encoding, status, attempts, next_retry_at, last_error, poison, created_at, updated_at)
      VALUES ${values.join(', ')}`,
      [...shared, ...ids],
    );
  }
  await pool.query(`ANALYZE ${store.tables.deadLetters}`);
  const seedMs = performance.now() - seedStart;

  const before = await countEffects(pool);
  const job = new ReplayJob(consumer, REPLAY);
  const start = performance.now();
  for (;;) {
    if ((await job.runOnce()) > 0) continue;
    if ((await store.deadLetters.countDeadLetters(GROUP)).pending === 0) break;
  }
  const ms = performance.now() - start;
  const counts = await store.deadLetters.countDeadLetters(GROUP);
  if (counts.resolved !== rows) throw new Error(`replay resolved ${counts.resolved} of ${rows}`);
  if ((await countEffects(pool)) - before !== rows) throw new Error('replay effects do not match the rows');
  return { ms, seedMs };
}

async function countEffects(pool: pg.Pool): Promise<number> {
  return Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${EFFECTS}`)).rows[0]!.n);
}

/** Every contender must leave exactly n effect rows; the table is emptied for the next one. */
async function expectEffects(pool: pg.Pool, n: number, who: string): Promise<void> {
  const rows = await countEffects(pool);
  if (rows !== n) throw new Error(`${who} left ${rows} effect rows, expected ${n}`);
  await pool.query(`TRUNCATE ${EFFECTS}`);
}

await main();
