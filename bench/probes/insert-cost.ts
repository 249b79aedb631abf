/**
 * Where a producer's PostgreSQL CPU goes: one business row per transaction, committed in six ways,
 * each measured from /proc over the same number of transactions (4 callers at once). Run with
 * `npx tsx bench/probes/insert-cost.ts [transactions]`; prints µs of PostgreSQL CPU per transaction,
 * for all its processes and for this probe's own backends.
 */
import pg from 'pg';
import { Outbox } from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { PAYLOAD, PG_URL, TYPE } from '../lib/config.js';
import { startCpuMeter } from '../lib/cpu-usage.js';

const N = Number(process.argv[2] ?? 4_000);
const APP = 'surety-insert-probe';
const schema = `probe_insert_${Date.now().toString(36)}`;
const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}application_name=${APP}`;

const admin = new pg.Pool({ connectionString: url, max: 2 });
await admin.query(`CREATE SCHEMA "${schema}"`);
const store = await createPostgresStore({ connectionString: url, schema, poolSize: 6 });
await store.migrate();
await admin.query(`CREATE TABLE "${schema}".orders (id BIGSERIAL PRIMARY KEY, total INT NOT NULL)`);
const order = `INSERT INTO "${schema}".orders (total) VALUES ($1)`;
const inStatement = new Outbox({ store });
const quiet = new Outbox({ store, notifyAfterCommit: true }); // never told of the commit: no NOTIFY at all

const variants: Record<string, () => Promise<unknown>> = {
  'BEGIN; INSERT order; COMMIT': () => store.transaction((tx) => tx.query(order, [1])),
  '+ outbox row, no NOTIFY': () =>
    store.transaction(async (tx) => {
      await tx.query(order, [1]);
      await quiet.add(tx, { type: TYPE, payload: PAYLOAD });
    }),
  '+ outbox row, NOTIFY in the statement': () =>
    store.transaction(async (tx) => {
      await tx.query(order, [1]);
      await inStatement.add(tx, { type: TYPE, payload: PAYLOAD });
    }),
  // What the relay's drain benchmarks start from: rows added 100 to a transaction, cost per row.
  '100 outbox rows per transaction, per row': () =>
    store.transaction(async (tx) => {
      for (let i = 0; i < 100; i++) await quiet.add(tx, { type: TYPE, payload: PAYLOAD });
    }),
  'outbox.transaction (NOTIFY after COMMIT)': () =>
    inStatement.transaction(async (tx) => {
      await tx.query(order, [1]);
      await inStatement.add(tx, { type: TYPE, payload: PAYLOAD });
    }),
};

async function backends(): Promise<{ foreign: Set<number>; mine: Set<number> }> {
  const { rows } = await admin.query<{ pid: number; mine: boolean }>(
    `SELECT pid, application_name = $1 AS mine FROM pg_stat_activity WHERE backend_type = 'client backend'`,
    [APP],
  );
  return {
    foreign: new Set(rows.filter((r) => !r.mine).map((r) => r.pid)),
    mine: new Set(rows.filter((r) => r.mine).map((r) => r.pid)),
  };
}

async function run(label: string, commit: () => Promise<unknown>): Promise<void> {
  const perCall = label.startsWith('100 ') ? 100 : 1;
  const n = N / perCall;
  let next = 0;
  const worker = async () => {
    while (next++ < n) await commit();
  };
  await Promise.all(Array.from({ length: 4 }, worker)); // warm: prepared statements, pool connections
  next = 0;
  const meter = startCpuMeter(() => []);
  const start = performance.now();
  await Promise.all(Array.from({ length: 4 }, worker));
  const ms = performance.now() - start;
  await store.outbox.notificationsSent();
  const cpu = meter.stop(await backends())!;
  const us = (v: number) => ((v * 1000) / N).toFixed(0).padStart(5);
  const rate = (N * 1000) / ms;
  console.log(
    `${label.padEnd(44)} all ${us(cpu.postgres)} µs   own backends ${us(cpu.postgresBackends)} µs   ${rate.toFixed(0)} ${perCall > 1 ? 'rows' : 'tx'}/s`,
  );
}

for (const listener of [false, true]) {
  // A relay elsewhere LISTENs: each NOTIFY wakes its backend, which reads the queue and tells its client.
  const listening = listener
    ? await store.outbox.listenForCommits(
        () => {},
        () => {},
      )
    : undefined;
  console.log(listener ? '\nwith a LISTEN connection (a relay in another process)' : 'no listener');
  for (const [label, commit] of Object.entries(variants)) await run(label, commit);
  await listening?.();
}
await store.close();
await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
await admin.end();
