/**
 * Flat cost: Surety's relay (defaults) draining the same backlog beside few and beside many retained
 * sent rows, alternately; then whether the retention statement deletes as fast as rows arrive.
 */
import { AMQP_URL, PG_URL, settings } from '../lib/config.js';
import { runOnce } from '../lib/contender-process.js';
import { openBroker } from '../lib/broker.js';
import { openDatabase, type Database } from '../lib/database.js';
import { figure, target, type ScenarioResult } from '../lib/results.js';
import { copySentRow } from '../lib/sent-rows.js';
import { perSecond } from '../lib/stats.js';

const PURGED = 100_000;

export async function flatCost(): Promise<ScenarioResult> {
  const tag = `bench_flat_${Date.now().toString(36)}`;
  const broker = await openBroker(tag);
  const sizes = [settings.flatSmallRows, settings.flatRows];
  const dbs: Database[] = [];
  const fillSeconds: number[] = [];
  const relayArgs = (db: Database) => ({
    pgUrl: PG_URL,
    schema: db.schema,
    amqpUrl: AMQP_URL,
    exchange: broker.exchange,
  });
  const backlog = settings.flatBacklog;
  const rates = sizes.map(() => [] as number[]);
  let purge: { rate: number; seconds: number } | undefined;
  try {
    for (const [i, size] of sizes.entries()) {
      const db = await openDatabase(`${tag}_${i}`);
      dbs.push(db);
      const t = performance.now();
      await db.fillOutbox(1, { n: 1 }); // small bodies: the retained rows' size is not what is measured
      await runOnce('surety-relay', relayArgs(db), { messages: 1 });
      await copySentRow(db.pool, db.store.outbox.outboxTable, size - 1);
      await db.settle();
      fillSeconds.push((performance.now() - t) / 1000);
      const stats = await db.store.outbox.stats();
      if (stats.sent !== size) throw new Error(`flat fill: ${stats.sent} sent rows, expected ${size}`);
    }
    const watermarks = await Promise.all(dbs.map((db) => db.store.outbox.stats().then((s) => s.sent)));
    for (let rep = 0; rep < settings.repetitions; rep++) {
      for (const [i, db] of dbs.entries()) {
        await broker.purge();
        await db.fillOutbox(backlog);
        await db.settle();
        const m = await runOnce('surety-relay', relayArgs(db), { messages: backlog });
        rates[i]!.push(perSecond(backlog, m.ms));
        // Back to the same number of retained rows: purge the backlog just sent (newest sent_at) by age is
        // not possible, so it is deleted by its place after the retained ones.
        await db.pool.query(
          `DELETE FROM ${db.store.outbox.outboxTable} WHERE ctid IN (SELECT ctid FROM ${db.store.outbox.outboxTable} ORDER BY seq DESC LIMIT $1)`,
          [backlog],
        );
        if ((await db.store.outbox.stats()).sent !== watermarks[i]) throw new Error('flat: retained rows changed');
      }
    }
    const big = dbs[1]!;
    await broker.purge();
    const m = await runOnce<{ deleted: number }>(
      'surety-purge',
      { pgUrl: PG_URL, schema: big.schema },
      { before: Date.now() + 1, max: PURGED },
    );
    purge = { rate: perSecond(m.result.deleted, m.ms), seconds: m.ms / 1000 };
  } finally {
    for (const db of dbs) await db.close();
    await broker.close();
  }
  const ratio = rates[1]!.map((r, i) => r / rates[0]![i]!);
  const arrival = figure(rates[1]!).median;
  const label = (n: number) => `${n.toLocaleString('en-US')} sent rows retained`;
  return {
    id: 'flat',
    title: 'Flat cost',
    conditions:
      `Surety's relay (defaults) drains ${backlog.toLocaleString('en-US')} pending 1 KiB rows beside ` +
      `${sizes.map((s) => s.toLocaleString('en-US')).join(' and ')} retained sent rows (small bodies, copied with ` +
      `generate_series), alternately, ${settings.repetitions} repetitions. BENCH_FLAT_ROWS sets the larger size.`,
    tables: [
      {
        title: 'Relay drain rate',
        columns: ['msg/s', 'fill (s)'],
        rows: sizes.map((s, i) => ({ label: label(s), cells: [figure(rates[i]!), figure([fillSeconds[i]!], 1)] })),
      },
      {
        title: `Retention beside ${label(sizes[1]!)}: the purge statement, batches of 1,000, deleting ${PURGED.toLocaleString('en-US')}`,
        columns: ['rows/s', 'of the arrival rate (the drain rate above)'],
        rows: [{ label: 'purge', cells: [figure([purge.rate]), figure([purge.rate / arrival], 2)] }],
      },
    ],
    targets: [target(`rate beside ${label(sizes[1]!)} / beside ${label(sizes[0]!)}`, ratio, '>=', 0.9)],
    notes: [
      purge.rate >= arrival
        ? 'Retention deletes faster than the relay can bring rows in.'
        : "Retention deletes more slowly than rows arrive at the relay's full rate: a finding, not a pass.",
    ],
  };
}
