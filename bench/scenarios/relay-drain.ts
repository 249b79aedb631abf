/**
 * Relay drain: a backlog of pending 1 KiB rows published to a RabbitMQ quorum queue, by raw amqplib
 * (the ceiling, no database), raw amqplib with Surety's wire properties and headers (what the wire
 * format alone costs), a naive relay on its own table, and Surety's relay with defaults.
 */
import { AMQP_URL, PG_URL, settings } from '../lib/config.js';
import { runOnce, type Measured } from '../lib/contender-process.js';
import { perMessage } from '../lib/cpu-usage.js';
import { openBroker } from '../lib/broker.js';
import { countRows, openDatabase } from '../lib/database.js';
import { createNaiveOutbox, fillNaiveOutbox, naiveTable } from '../lib/naive-outbox.js';
import { figure, target, type ScenarioResult } from '../lib/results.js';
import { perSecond } from '../lib/stats.js';

const CONTENDERS = [
  'raw amqplib, 1,000 in flight',
  "raw amqplib, Surety's wire headers",
  'naive relay',
  'Surety relay, defaults',
] as const;
type Name = (typeof CONTENDERS)[number];

interface Run {
  readonly rate: number;
  readonly cpu: ReturnType<typeof perMessage> | undefined;
}

export async function relayDrain(): Promise<ScenarioResult> {
  const n = settings.relayMessages;
  const tag = `bench_relay_${Date.now().toString(36)}`;
  const db = await openDatabase(tag);
  const broker = await openBroker(tag);
  await createNaiveOutbox(db.pool, tag);
  const amqp = { amqpUrl: AMQP_URL, exchange: broker.exchange };
  const runs = new Map<Name, Run[]>(CONTENDERS.map((c) => [c, []]));
  const record = (name: Name, m: Measured<unknown>) =>
    runs.get(name)!.push({ rate: perSecond(n, m.ms), cpu: m.cpu && perMessage(m.cpu, n) });

  try {
    for (let rep = 0; rep < settings.repetitions; rep++) {
      for (const name of CONTENDERS) {
        await broker.purge();
        if (name === 'raw amqplib, 1,000 in flight' || name === "raw amqplib, Surety's wire headers") {
          const wire = name !== 'raw amqplib, 1,000 in flight';
          const m = await runOnce<{ sent: number }>('raw-publisher', { ...amqp, messages: n, wire });
          if (m.result.sent !== n) throw new Error(`raw publisher confirmed ${m.result.sent} of ${n}`);
          record(name, m);
        } else if (name === 'naive relay') {
          await fillNaiveOutbox(db.pool, tag, n);
          await db.settle();
          const m = await runOnce<{ sent: number }>('naive-relay', { ...amqp, pgUrl: PG_URL, table: naiveTable(tag) });
          const left = await countRows(db.pool, `${naiveTable(tag)} WHERE sent_at IS NULL`);
          if (m.result.sent !== n || left !== 0) throw new Error(`naive relay sent ${m.result.sent} of ${n}`);
          record(name, m);
        } else {
          await db.pool.query(`TRUNCATE ${db.store.outbox.outboxTable}`);
          await db.fillOutbox(n);
          await db.settle();
          const m = await runOnce('surety-relay', { ...amqp, pgUrl: PG_URL, schema: tag }, { messages: n });
          const stats = await db.store.outbox.stats();
          if (stats.sent !== n) throw new Error(`Surety relay marked ${stats.sent} of ${n} sent`);
          record(name, m);
        }
      }
    }
  } finally {
    await broker.close();
    await db.close();
  }

  const of = (name: Name) => runs.get(name)!;
  const cpu = (name: Name, k: keyof NonNullable<Run['cpu']>) => figure(of(name).map((r) => r.cpu?.[k] ?? NaN));
  const surety = of('Surety relay, defaults');
  const naive = of('naive relay');
  // Ratios within each repetition: contenders of one repetition ran back to back, so they share its conditions.
  const rateRatio = surety.map((s, i) => s.rate / naive[i]!.rate);
  const cpuRatio = surety.map((s, i) => (s.cpu?.total ?? NaN) / (naive[i]!.cpu?.total ?? NaN));
  return {
    id: 'relay',
    title: 'Relay drain',
    conditions:
      `A backlog of ${n.toLocaleString('en-US')} pending 1 KiB rows published to a RabbitMQ quorum queue ` +
      `(persistent, confirmed); each contender in its own process, ${settings.repetitions} interleaved repetitions.`,
    tables: [
      {
        title: 'Throughput and CPU per message (µs, from /proc)',
        columns: ['msg/s', 'contender', 'PostgreSQL', 'of it, backends', 'RabbitMQ', 'total', 'other processes'],
        rows: CONTENDERS.map((name) => ({
          label: name,
          cells: [
            figure(of(name).map((r) => r.rate)),
            cpu(name, 'contender'),
            cpu(name, 'postgres'),
            cpu(name, 'postgresBackends'),
            cpu(name, 'rabbitmq'),
            cpu(name, 'total'),
            cpu(name, 'other'),
          ],
        })),
      },
    ],
    targets: [
      target('Surety / naive, msg/s', rateRatio, '>=', 1.6),
      target('Surety / naive, CPU per message (all processes)', cpuRatio, '<=', 0.8),
    ],
    notes: [
      'total = contender + PostgreSQL + RabbitMQ; the bench process and other processes are left out.',
      'Each backlog is VACUUM ANALYZEd before its run, as one that has waited a while would be.',
      "Surety's wire headers: the same raw loop, each message with the properties and the five-entry header table every Surety message carries; the difference from the first row is what the wire format costs amqplib and RabbitMQ.",
    ],
  };
}
