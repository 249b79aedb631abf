/**
 * Consumer drain: a quorum queue pre-filled with Surety wire messages, drained by a bare ack-only
 * amqplib consumer and by Surety's Consumer (defaults, then handlerConcurrency 16) with a one-INSERT
 * handler.
 */
import { AMQP_URL, PG_URL, settings } from '../lib/config.js';
import { runOnce, type Measured } from '../lib/contender-process.js';
import { perMessage } from '../lib/cpu-usage.js';
import { openBroker } from '../lib/broker.js';
import { countRows, openDatabase } from '../lib/database.js';
import { figure, target, type ScenarioResult } from '../lib/results.js';
import { perSecond } from '../lib/stats.js';

const CONTENDERS = [
  'bare amqplib, ack only, prefetch 1,000',
  'Surety Consumer, defaults',
  'Surety Consumer, handlerConcurrency 16',
  'Surety Consumer, parallelism 4',
] as const;

export async function consumerDrain(): Promise<ScenarioResult> {
  const n = settings.consumerMessages;
  const tag = `bench_cons_${Date.now().toString(36)}`;
  const db = await openDatabase(tag);
  const broker = await openBroker(tag);
  const runs = new Map<string, { rate: number; cpu: number }[]>(CONTENDERS.map((c) => [c, []]));
  const record = (name: string, m: Measured<unknown>) =>
    runs.get(name)!.push({ rate: perSecond(n, m.ms), cpu: m.cpu ? perMessage(m.cpu, n).total : NaN });
  const surety = { pgUrl: PG_URL, schema: tag, amqpUrl: AMQP_URL, exchange: broker.exchange, group: broker.queue };
  try {
    for (let rep = 0; rep < settings.repetitions; rep++) {
      for (const name of CONTENDERS) {
        await broker.purge();
        await db.pool.query(`TRUNCATE "${tag}".effects, ${db.store.tables.inbox}`);
        await broker.prefill(n);
        if (name === CONTENDERS[0]) {
          record(name, await runOnce('bare-consumer', { amqpUrl: AMQP_URL, queue: broker.queue }, { messages: n }));
          continue;
        }
        const options =
          name === CONTENDERS[2] ? { handlerConcurrency: 16 } : name === CONTENDERS[3] ? { parallelism: 4 } : {};
        record(name, await runOnce('surety-consumer', { ...surety, ...options }, { messages: n }));
        const effects = await countRows(db.pool, `"${tag}".effects`);
        if (effects !== n) throw new Error(`${name} left ${effects} effect rows, expected ${n}`);
      }
    }
  } finally {
    await broker.close();
    await db.close();
  }
  const rates = (name: string) => runs.get(name)!.map((r) => r.rate);
  const bare = rates(CONTENDERS[0]);
  const ratio = (name: string) => rates(name).map((r, i) => r / bare[i]!);
  return {
    id: 'consumer',
    title: 'Consumer drain',
    conditions:
      `A quorum queue pre-filled with ${n.toLocaleString('en-US')} Surety wire messages (1 KiB), drained; each contender in ` +
      `its own process, ${settings.repetitions} interleaved repetitions. Surety's handler inserts one row.`,
    tables: [
      {
        title: 'Throughput and CPU per message (µs, contender + PostgreSQL + RabbitMQ)',
        columns: ['msg/s', 'of bare', 'CPU µs/msg'],
        rows: CONTENDERS.map((name) => ({
          label: name,
          cells: [
            figure(rates(name)),
            figure(ratio(name), 2),
            figure(
              runs.get(name)!.map((r) => r.cpu),
              0,
            ),
          ],
        })),
      },
    ],
    targets: [target('Surety defaults / bare, msg/s', ratio(CONTENDERS[1]), '>=', 0.3)],
    notes: [],
  };
}
