/**
 * Flat cost: the locked claim + mark rate (one relay, batches of 500) over P pending rows, with R sent
 * rows retained beside them, per layout (variants.ts). Sent rows are bulk-loaded as the layout keeps
 * them (V0: status 'sent' with sent_at; V3: the same row, no queue row), then VACUUM ANALYZE.
 *
 * Env: RETAINED (comma list, default 10000,1000000), PENDING (default 20000), VARIANTS (default V0,built).
 * Run: npx tsx bench/schema-prototype/retained.ts
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { VARIANTS, type Variant } from './variants.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RETAINED = (process.env.RETAINED ?? '10000,1000000').split(',').map(Number);
const PENDING = Number(process.env.PENDING ?? 20_000);
const BATCH = 500;
const PAYLOAD = JSON.stringify({ data: 'x'.repeat(1024 - 11) });
const PLAN = 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL synchronous_commit = off';

const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

async function measure(v: Variant, retained: number): Promise<{ rate: number; cpu: number }> {
  const s = `schemaproto_ret_${v.name.toLowerCase().replace(/[^a-z0-9]/g, '')}_${Date.now().toString(36)}`;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`CREATE SCHEMA ${s}`);
  try {
    for (const stmt of v.setup(s)) await c.query(stmt);
    const table = v.tables(s)[0]!; // the outbox (message) table
    // Retained sent rows, created long before the pending ones.
    await c.query(
      `INSERT INTO ${table} (message_id, type, msg_key, topic, ordering_key, version, headers, payload, created_at,
        next_attempt_at, status, sent_at)
      SELECT gen_random_uuid(), 'order.placed', 'r' || i, 'orders', 'r' || i, 1, '{}', $2, i, i, 'sent', i + 1
      FROM generate_series(1, $1::bigint) i`,
      [retained, PAYLOAD],
    );
    const insert = v.insert(s);
    for (let i = 0; i < PENDING; i++) {
      const id = randomUUID();
      await c.query({
        name: 'ins',
        text: insert,
        values: v.insertValues?.(id, 10_000_000 + i) ?? [
          id,
          'order.placed',
          id,
          'orders',
          id,
          1,
          '{}',
          PAYLOAD,
          10_000_000 + i,
        ],
      });
    }
    for (const t of v.tables(s)) await c.query(`VACUUM ANALYZE ${t}`);
    const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const now = 20_000_000;
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    let total = 0;
    for (;;) {
      await c.query(`BEGIN; ${PLAN}`);
      const { rows } = await c.query({ name: 'lock', text: v.claimLocked(s), values: [now, BATCH] });
      if (rows.length > 0) {
        const seqs = rows.map((r: { seq: string }) => Number(r.seq));
        await c.query({ name: 'mark', text: v.markSent(s), values: [seqs, now] });
      }
      await c.query('COMMIT');
      if (rows.length === 0) break;
      total += rows.length;
    }
    const ms = performance.now() - t0;
    if (total !== PENDING) throw new Error(`claimed ${total} of ${PENDING}`);
    return { rate: Math.round((total / ms) * 1000), cpu: ((cpuMs(pid) - cpu0) * 1000) / total };
  } finally {
    await c.query(`DROP SCHEMA ${s} CASCADE`);
    await c.end();
  }
}

async function main(): Promise<void> {
  const names = (process.env.VARIANTS ?? 'V0,built').split(',');
  console.log(
    `locked claim + mark of ${PENDING} pending rows, batches of ${BATCH}: msg/s, own backend CPU µs per message`,
  );
  for (const retained of RETAINED) {
    for (const name of names) {
      const r = await measure(VARIANTS[name]!, retained);
      console.log(`${name} retained=${retained}: ${r.rate} msg/s, ${r.cpu.toFixed(1)} µs`);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
