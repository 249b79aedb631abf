/**
 * End to end: commit to consumer handler at a steady rate, each part in its own process. Surety:
 * producer (outbox.transaction), relay (defaults, woken by NOTIFY), consumer (defaults, one-INSERT
 * handler). pg-boss: producer (send) and worker on its NOTIFY path, same rate. The RabbitMQ hop alone:
 * an amqplib publisher (confirm channel, its time taken as each publish is handed over) to the same
 * quorum queue and a bare amqplib consumer, same rate: the floor the broker hop sets on Surety's path.
 */
import { AMQP_URL, PG_URL, settings } from '../lib/config.js';
import { measure, startContender, type Contender } from '../lib/contender-process.js';
import { perMessage } from '../lib/cpu-usage.js';
import { openBroker } from '../lib/broker.js';
import { openDatabase } from '../lib/database.js';
import { figure, target, type ScenarioResult } from '../lib/results.js';
import { percentile } from '../lib/stats.js';

type Times = [id: string, at: number][];
const CONTENDERS = [
  'Surety: producer, relay, consumer',
  'pg-boss 12, NOTIFY worker',
  'RabbitMQ hop alone: amqplib publisher, quorum queue, amqplib consumer',
] as const;

interface Run {
  /** Commits per second the producer reached: below the set rate when a commit takes longer than its gap. */
  readonly rate: number;
  /** Messages handled more than a second after their commit, or not in time at all. */
  readonly late: number;
  readonly unhandled: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  /** CPU µs per message: every process serving the contender, and of it its own processes, PostgreSQL and RabbitMQ. */
  readonly cpuUs: number;
  readonly cpuContender: number;
  readonly cpuPostgres: number;
  readonly cpuRabbitMq: number;
  /** Threads put to sleep per message (each a wake-up): its own processes, PostgreSQL, RabbitMQ. */
  readonly sleepsContender: number;
  readonly sleepsPostgres: number;
  readonly sleepsRabbitMq: number;
}

type Cpu = Omit<Run, keyof ReturnType<typeof latencies>>;

/** Surety's path cut where the relay hands a message to the transport: ms percentiles of each part. */
interface Split {
  readonly toPublish: Percentiles;
  readonly toArrival: Percentiles;
  readonly toHandler: Percentiles;
}
type Percentiles = Record<'p50' | 'p95' | 'p99' | 'max', number>;
const SPLIT_PARTS = {
  toPublish: "commit → the relay hands it to RabbitMQ (NOTIFY, the relay's claim)",
  toArrival: 'then → the consumer receives it (the broker hop)',
  toHandler: "then → the handler's first call (the consumer's batch and transaction start)",
} as const;

/**
 * Milliseconds from `from` to `to` for each committed message, sorted. A message missing at either end
 * counts as infinitely late: percentiles past the share that arrived read n/a.
 */
function gaps(committed: Times, from: ReadonlyMap<string, number>, to: ReadonlyMap<string, number>): number[] {
  return committed
    .map(([id]) => (from.has(id) && to.has(id) ? to.get(id)! - from.get(id)! : Infinity))
    .sort((a, b) => a - b);
}

function percentiles(ms: readonly number[]): Percentiles {
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), p99: percentile(ms, 99), max: ms.at(-1)! };
}

function split(committed: Times, published: Times, arrived: Times, handled: Times): Split {
  const [commit, pub, arr, hand] = [committed, published, arrived, handled].map((times) => new Map(times));
  return {
    toPublish: percentiles(gaps(committed, commit!, pub!)),
    toArrival: percentiles(gaps(committed, pub!, arr!)),
    toHandler: percentiles(gaps(committed, arr!, hand!)),
  };
}

function latencies(committed: Times, handled: Times) {
  const ms = gaps(committed, new Map(committed), new Map(handled));
  // From the first commit to the last, at the rate's gap before the first.
  const span = committed.at(-1)![1] - committed[0]![1] + 1000 / settings.latencyRate;
  return {
    rate: (committed.length / span) * 1000,
    late: ms.filter((v) => v > 1000).length,
    unhandled: ms.filter((v) => v === Infinity).length,
    ...percentiles(ms),
  };
}

/**
 * Runs `producer` and `receiver` together. The receiver reports what it handled once it has every
 * message, or when told to, 30 s after the last commit (past pg-boss's 30 s backstop poll).
 */
function paced(all: Contender[], producer: Contender, receiver: Contender, messages: number) {
  let timer: NodeJS.Timeout | undefined;
  const produced = (producer.go({ messages, rate: settings.latencyRate }) as Promise<{ committedAt: Times }>).then(
    (r) => {
      timer = setTimeout(() => receiver.finish(), 30_000);
      return r;
    },
  );
  const received = (receiver.go({ messages }) as Promise<{ handledAt: Times; arrivedAt?: Times }>).finally(() =>
    clearTimeout(timer),
  );
  return measure(all, () => Promise.all([produced, received])).finally(() => clearTimeout(timer));
}

export async function endToEnd(): Promise<ScenarioResult> {
  const messages = settings.latencyRate * settings.latencySeconds;
  const tag = `bench_e2e_${Date.now().toString(36)}`;
  const db = await openDatabase(tag);
  const broker = await openBroker(tag);
  const bossSchema = `${tag}_boss`;
  const runs = new Map<string, Run[]>(CONTENDERS.map((c) => [c, []]));
  const splits: Split[] = [];
  const pg = { pgUrl: PG_URL, schema: tag };
  try {
    for (let rep = 0; rep < settings.latencyRepetitions; rep++) {
      for (const name of CONTENDERS) {
        const started: Contender[] = [];
        const start = async (file: string, args: unknown) => {
          const c = await startContender(file, args);
          started.push(c);
          return c;
        };
        try {
          let m;
          if (name === CONTENDERS[0]) {
            await db.pool.query(`TRUNCATE "${tag}".orders, "${tag}".effects, ${db.store.outbox.outboxTable}`);
            await broker.purge();
            const amqp = { amqpUrl: AMQP_URL, exchange: broker.exchange };
            const consumer = await start('surety-consumer', {
              ...pg,
              ...amqp,
              group: broker.queue,
              record: true,
            });
            const relay = await start('surety-relay', { ...pg, ...amqp, record: true });
            const producer = await start('surety-producer', { ...pg, outbox: true });
            await relay.go();
            m = await paced(started, producer, consumer, messages);
            const { publishedAt } = (await relay.go({ report: true })) as { publishedAt: Times };
            const [{ committedAt }, { arrivedAt, handledAt }] = m.result;
            splits.push(split(committedAt, publishedAt, arrivedAt ?? [], handledAt));
          } else if (name === CONTENDERS[2]) {
            await broker.purge();
            const consumer = await start('bare-consumer', { amqpUrl: AMQP_URL, queue: broker.queue, record: true });
            const runTag = `${tag}-r${rep}`;
            const publisher = await start('paced-publisher', { amqpUrl: AMQP_URL, exchange: broker.exchange, runTag });
            m = await paced(started, publisher, consumer, messages);
          } else {
            const boss = { pgUrl: PG_URL, schema: bossSchema, queue: 'bench' };
            const worker = await start('pgboss-worker', boss);
            const producer = await start('pgboss-producer', boss);
            m = await paced(started, producer, worker, messages);
          }
          const [{ committedAt }, { handledAt }] = m.result;
          const us = m.cpu ? perMessage(m.cpu, messages) : undefined;
          const cpu: Cpu = {
            cpuUs: us?.total ?? NaN,
            cpuContender: us?.contender ?? NaN,
            cpuPostgres: us?.postgres ?? NaN,
            cpuRabbitMq: us?.rabbitmq ?? NaN,
            sleepsContender: m.cpu ? m.cpu.sleeps.contender / messages : NaN,
            sleepsPostgres: m.cpu ? m.cpu.sleeps.postgres / messages : NaN,
            sleepsRabbitMq: m.cpu ? m.cpu.sleeps.rabbitmq / messages : NaN,
          };
          runs.get(name)!.push({ ...latencies(committedAt, handledAt), ...cpu });
        } finally {
          for (const c of started.reverse()) await c.close();
        }
      }
    }
  } finally {
    await db.pool.query(`DROP SCHEMA IF EXISTS "${bossSchema}" CASCADE`);
    await broker.close();
    await db.close();
  }
  const of = (name: string, k: keyof Run, digits = 1) =>
    figure(
      runs.get(name)!.map((r) => r[k]),
      digits,
    );
  const surety = runs.get(CONTENDERS[0])!;
  const boss = runs.get(CONTENDERS[1])!;
  return {
    id: 'e2e',
    title: 'End to end, commit to handler',
    conditions:
      `${settings.latencyRate} msg/s for ${settings.latencySeconds} s (${messages.toLocaleString('en-US')} messages of 1 KiB), ` +
      `each part in its own process, ${settings.latencyRepetitions} interleaved repetitions; latency from the producer's ` +
      "commit returning to the handler's first call (one machine clock).",
    tables: [
      {
        title: 'Latency (ms) and CPU per message (µs, all processes)',
        columns: ['commits/s reached', 'p50', 'p95', 'p99', 'max', 'over 1 s', 'never', 'CPU µs/msg'],
        rows: CONTENDERS.map((name) => ({
          label: name,
          cells: [
            of(name, 'rate', 0),
            of(name, 'p50', 2),
            of(name, 'p95'),
            of(name, 'p99'),
            of(name, 'max'),
            of(name, 'late', 0),
            of(name, 'unhandled', 0),
            of(name, 'cpuUs', 0),
          ],
        })),
      },
      {
        title: 'CPU per message (µs) and threads put to sleep per message (each a wake-up), by process',
        columns: ['CPU: its own', 'PostgreSQL', 'RabbitMQ', 'total', 'sleeps: its own', 'PostgreSQL', 'RabbitMQ'],
        rows: CONTENDERS.map((name) => ({
          label: name,
          cells: [
            of(name, 'cpuContender', 0),
            of(name, 'cpuPostgres', 0),
            of(name, 'cpuRabbitMq', 0),
            of(name, 'cpuUs', 0),
            of(name, 'sleepsContender'),
            of(name, 'sleepsPostgres'),
            of(name, 'sleepsRabbitMq'),
          ],
        })),
      },
      {
        title:
          "Surety's latency cut where the relay hands the message to RabbitMQ (ms; percentiles of parts do not add up)",
        columns: ['p50', 'p95', 'p99', 'max'],
        rows: (Object.keys(SPLIT_PARTS) as (keyof Split)[]).map((k) => ({
          label: SPLIT_PARTS[k],
          cells: (['p50', 'p95', 'p99', 'max'] as const).map((q) =>
            figure(
              splits.map((sp) => sp[k][q]),
              q === 'p50' ? 2 : 1,
            ),
          ),
        })),
      },
    ],
    targets: [
      target(
        'Surety p99 / pg-boss p99',
        surety.map((s, i) => s.p99 / boss[i]!.p99),
        '<=',
        1,
      ),
    ],
    notes: [
      "Surety's consumer handler inserts one row in the consumer's transaction; pg-boss's handler only records the time.",
      "RabbitMQ's and PostgreSQL's CPU are counted for every contender: pg-boss does not use RabbitMQ, nor the " +
        "hop alone PostgreSQL, so their figures there are the idle server's.",
      'The hop-alone row is the floor a broker hop sets at this rate (publish handed to amqplib, to first ' +
        "receipt); Surety's path adds PostgreSQL's commit notification, the relay's claim and the consumer's " +
        'transaction.',
      'Sleeps are voluntary context switches of every thread: each is a wake-up later (see bench/probes/wake-cost.ts).',
    ],
  };
}
