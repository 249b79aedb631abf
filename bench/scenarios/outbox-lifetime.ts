/**
 * The outbox's PostgreSQL CPU per message over its whole life: the insert (a producer process
 * committing one order and its event per transaction, less the same transactions without the event),
 * the claim and mark (Surety's relay, defaults, draining what was inserted) and the purge (the
 * retention statement deleting it).
 */
import { AMQP_URL, PG_URL, settings } from '../lib/config.js';
import { measure, runOnce, startContender } from '../lib/contender-process.js';
import { openBroker } from '../lib/broker.js';
import { openDatabase } from '../lib/database.js';
import type { CpuMs } from '../lib/cpu-usage.js';
import { figure, target, type ScenarioResult } from '../lib/results.js';

export async function outboxLifetime(): Promise<ScenarioResult> {
  const n = settings.lifetimeMessages;
  const tag = `bench_life_${Date.now().toString(36)}`;
  const db = await openDatabase(tag);
  const broker = await openBroker(tag);
  const us = (ms: number | undefined) => ((ms ?? NaN) * 1000) / n;
  const phases = { business: [] as number[], insert: [] as number[], relay: [] as number[], purge: [] as number[] };
  // The same phases counting only the contenders' backends (no WAL writer, checkpointer, autovacuum).
  const backends = { business: [] as number[], insert: [] as number[], relay: [] as number[], purge: [] as number[] };
  const record = (phase: keyof typeof phases, cpu: CpuMs | undefined) => {
    phases[phase].push(us(cpu?.postgres));
    backends[phase].push(us(cpu?.postgresBackends));
  };
  try {
    for (let rep = 0; rep < settings.repetitions; rep++) {
      await db.pool.query(`TRUNCATE "${tag}".orders, ${db.store.outbox.outboxTable}`);
      await broker.purge();
      await db.settle();
      for (const withOutbox of [false, true]) {
        const producer = await startContender('surety-producer', { pgUrl: PG_URL, schema: tag, outbox: withOutbox });
        try {
          const m = await measure([producer], () => producer.go({ messages: n, concurrency: 4 }));
          record(withOutbox ? 'insert' : 'business', m.cpu);
        } finally {
          await producer.close();
        }
      }
      const relay = await runOnce(
        'surety-relay',
        { pgUrl: PG_URL, schema: tag, amqpUrl: AMQP_URL, exchange: broker.exchange },
        { messages: n },
      );
      record('relay', relay.cpu);
      const stats = await db.store.outbox.stats();
      if (stats.sent !== n) throw new Error(`relay marked ${stats.sent} of ${n} sent`);
      const purge = await runOnce<{ deleted: number }>(
        'surety-purge',
        { pgUrl: PG_URL, schema: tag },
        { before: Date.now() + 1 },
      );
      if (purge.result.deleted !== n) throw new Error(`purge deleted ${purge.result.deleted} of ${n}`);
      record('purge', purge.cpu);
    }
  } finally {
    await broker.close();
    await db.close();
  }
  const life = (p: typeof phases) => {
    const insert = p.insert.map((v, i) => v - p.business[i]!);
    return { insert, total: insert.map((v, i) => v + p.relay[i]! + p.purge[i]!) };
  };
  const all = life(phases);
  const own = life(backends);
  const row = (label: string, a: number[], b: number[]) => ({ label, cells: [figure(a, 1), figure(b, 1)] });
  return {
    id: 'lifetime',
    title: "The outbox's PostgreSQL CPU per message, over its life",
    conditions:
      `${n.toLocaleString('en-US')} messages (1 KiB) per repetition, ${settings.repetitions} repetitions: a producer process ` +
      'commits one order row and one outbox.add per outbox.transaction (4 callers at once), then the same without the ' +
      "event; Surety's relay (defaults) drains them; the retention statement purges them.",
    tables: [
      {
        title: 'PostgreSQL CPU, µs per message',
        columns: ['all its processes', "the contenders' backends"],
        rows: [
          row('business transaction alone (not counted)', phases.business, backends.business),
          row('insert: with the event, less without', all.insert, own.insert),
          row('claim and mark sent (relay)', phases.relay, backends.relay),
          row('purge (retention)', phases.purge, backends.purge),
          row('whole life', all.total, own.total),
        ],
      },
    ],
    targets: [target("outbox's PostgreSQL CPU per message, whole life (µs)", all.total, '<=', 8, 1)],
    notes: [
      'Autovacuum runs in processes of its own that may start and end inside a phase; what such a process spends there is not seen.',
    ],
  };
}
