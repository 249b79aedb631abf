/**
 * Broker relays: for each broker, its own client publishing with confirms at its ceiling (no
 * database) beside Surety's relay with defaults draining a backlog of the same size from PostgreSQL,
 * interleaved and repeated. No target: the ratio is a figure beside the ceiling.
 */
import { PG_URL, settings } from '../lib/config.js';
import { runOnce, type Measured } from '../lib/contender-process.js';
import { perMessage } from '../lib/cpu-usage.js';
import { openDatabase, type Database } from '../lib/database.js';
import { kafkaTarget } from '../lib/brokers/kafka.js';
import { natsTarget } from '../lib/brokers/nats.js';
import { rabbitMqTarget } from '../lib/brokers/rabbitmq.js';
import { redisTarget } from '../lib/brokers/redis.js';
import type { BrokerTarget } from '../lib/brokers/target.js';
import { figure, type ScenarioResult } from '../lib/results.js';
import { perSecond } from '../lib/stats.js';

const TARGETS = [rabbitMqTarget, kafkaTarget, natsTarget, redisTarget];

interface Run {
  readonly rate: number;
  readonly cpu: ReturnType<typeof perMessage> | undefined;
}

interface Runs {
  readonly target: BrokerTarget;
  readonly raw: Run[];
  readonly surety: Run[];
}

export async function brokerRelays(): Promise<ScenarioResult> {
  const n = settings.brokerMessages;
  const tag = `bench_brokers_${Date.now().toString(36)}`;
  const db = await openDatabase(tag);
  const all: Runs[] = [];
  try {
    for (const open of TARGETS) all.push({ target: await open(tag), raw: [], surety: [] });
    for (let rep = 0; rep < settings.repetitions; rep++) {
      for (const runs of all) {
        runs.raw.push(await rawRun(runs.target, n));
        runs.surety.push(await suretyRun(runs.target, db, tag, n));
      }
    }
  } finally {
    await Promise.allSettled(all.map((r) => r.target.close()));
    await db.close();
  }
  return report(all, n);
}

async function rawRun(target: BrokerTarget, n: number): Promise<Run> {
  const { raw } = await target.prepare();
  const m = await runOnce<{ sent: number }>(target.raw.contender, { ...raw, messages: n });
  const held = await target.held();
  if (m.result.sent !== n || held !== n)
    throw new Error(`${target.raw.contender}: ${JSON.stringify(m.result)} of ${n}, the broker holds ${held}`);
  return measured(target, m, n);
}

async function suretyRun(target: BrokerTarget, db: Database, schema: string, n: number): Promise<Run> {
  const { transport } = await target.prepare();
  await db.pool.query(`TRUNCATE ${db.store.outbox.outboxTable}`);
  await db.fillOutbox(n);
  await db.settle();
  const m = await runOnce('surety-relay', { pgUrl: PG_URL, schema, transport }, { messages: n });
  const { sent } = await db.store.outbox.stats();
  const held = await target.held();
  if (sent !== n || held !== n)
    throw new Error(`Surety relay to ${target.kind}: ${sent} of ${n} marked sent, the broker holds ${held}`);
  return measured(target, m, n);
}

const measured = (target: BrokerTarget, m: Measured<unknown>, n: number): Run => ({
  rate: perSecond(n, m.ms),
  cpu: m.cpu && perMessage(m.cpu, n, target.kind),
});

function report(all: readonly Runs[], n: number): ScenarioResult {
  const cpu = (runs: readonly Run[], k: keyof NonNullable<Run['cpu']>) => figure(runs.map((r) => r.cpu?.[k] ?? NaN));
  const row = (label: string, runs: readonly Run[], ratio: readonly number[]) => ({
    label,
    cells: [
      figure(runs.map((r) => r.rate)),
      figure(ratio, 2),
      cpu(runs, 'contender'),
      cpu(runs, 'postgres'),
      cpu(runs, 'broker'),
      cpu(runs, 'total'),
      cpu(runs, 'other'),
    ],
  });
  // Ratios within each repetition: the two ran back to back, so they share its conditions.
  const within = (r: Runs, f: (s: Run, raw: Run) => number) => r.surety.map((s, i) => f(s, r.raw[i]!));
  return {
    id: 'brokers',
    title: 'Relay per broker, beside its own client',
    conditions:
      `For each broker, its own client publishes ${n.toLocaleString('en-US')} 1 KiB messages with confirms ` +
      `at its ceiling (no database), then Surety's relay with defaults drains a backlog of as many pending rows ` +
      `from PostgreSQL to it; each contender in its own process, ${settings.repetitions} interleaved repetitions.`,
    tables: [
      {
        title: 'Throughput, Surety / raw, and CPU per message (µs, from /proc)',
        columns: ['msg/s', 'of raw', 'contender', 'PostgreSQL', 'broker', 'total', 'other processes'],
        rows: all.flatMap((r) => [
          row(
            `${r.target.title}: ${r.target.raw.label}`,
            r.raw,
            r.raw.map(() => 1),
          ),
          row(
            `${r.target.title}: Surety relay, defaults`,
            r.surety,
            within(r, (s, raw) => s.rate / raw.rate),
          ),
        ]),
      },
      {
        title: 'Surety / raw, CPU per message (total)',
        columns: ['total CPU of raw'],
        rows: all.map((r) => ({
          label: r.target.title,
          cells: [
            figure(
              within(r, (s, raw) => (s.cpu?.total ?? NaN) / (raw.cpu?.total ?? NaN)),
              2,
            ),
          ],
        })),
      },
    ],
    targets: [],
    notes: [
      "broker = that broker's server process (RabbitMQ's Erlang VM and helpers, Kafka's JVM, nats-server, " +
        "redis-server); on a shared machine it carries other clients' load too.",
      'total = contender + PostgreSQL + broker; the bench process and other processes are left out.',
      'Each broker is emptied before each run (Kafka: a fresh topic), and every run is checked: the broker holds ' +
        'exactly the messages published.',
      'Each backlog is VACUUM ANALYZEd before its run, as one that has waited a while would be.',
    ],
  };
}
