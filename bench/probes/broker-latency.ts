/**
 * The broker's own share of end-to-end latency: raw amqplib publishing persistent 1 KiB messages to a
 * quorum queue at a steady rate, confirmed, and a consumer (prefetch 100, acking each) in a child
 * process; latency from the publish call to the consumer's receipt (one machine clock). No database.
 * Publishes go one at a time, each awaiting its confirm, as a relay at a trickle does.
 * Run with `npx tsx bench/probes/broker-latency.ts [rate] [seconds]`; prints p50/p95/p99/max in ms.
 *
 * Surety's path commit -> handler holds this hop plus PostgreSQL's (NOTIFY, claim, the consumer's
 * BEGIN and inbox insert); pg-boss's holds PostgreSQL's only.
 */
import { fork } from 'node:child_process';
import amqp from 'amqplib';
import { AMQP_URL, PAYLOAD } from '../lib/config.js';
import { atPace, now } from '../lib/pace.js';
import { percentile } from '../lib/stats.js';

const queue = process.env.PROBE_QUEUE ?? `probe_latency_${Date.now().toString(36)}`;

if (process.argv[2] === 'consume') {
  const connection = await amqp.connect(AMQP_URL);
  const channel = await connection.createChannel();
  await channel.prefetch(100);
  const received: [string, number][] = [];
  await channel.consume(queue, (msg) => {
    if (!msg) return;
    received.push([msg.properties.messageId as string, now()]);
    channel.ack(msg);
  });
  process.on('message', async () => {
    process.send!(received);
    await connection.close();
  });
  process.send!('ready');
} else {
  const rate = Number(process.argv[2] ?? 200);
  const seconds = Number(process.argv[3] ?? 20);
  const connection = await amqp.connect(AMQP_URL);
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const child = fork(process.argv[1]!, ['consume'], {
    execArgv: process.execArgv,
    env: { ...process.env, PROBE_QUEUE: queue },
  });
  const next = () => new Promise<unknown>((resolve) => child.once('message', resolve));
  await next();
  const body = Buffer.from(JSON.stringify(PAYLOAD));
  let n = 0;
  const startedAt = new Map<string, number>();
  await atPace(rate, rate * seconds, async () => {
    const id = `m${n++}`;
    startedAt.set(id, now());
    await new Promise<void>((resolve, reject) =>
      channel.publish('', queue, body, { persistent: true, messageId: id }, (err) => (err ? reject(err) : resolve())),
    );
    return id;
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // the last deliveries: a fixed tail, not a measurement
  child.send('report');
  const received = new Map((await next()) as [string, number][]);
  const ms = [...startedAt].map(([id, at]) => (received.get(id) ?? Infinity) - at).sort((a, b) => a - b);
  const fmt = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'never');
  console.log(
    `quorum queue, ${rate} msg/s for ${seconds} s: publish -> receipt ms p50 ${fmt(percentile(ms, 50))} p95 ${fmt(percentile(ms, 95))} p99 ${fmt(percentile(ms, 99))} max ${fmt(ms.at(-1)!)}`,
  );
  await channel.deleteQueue(queue);
  await connection.close();
}
