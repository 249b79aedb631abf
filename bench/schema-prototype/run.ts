/**
 * PostgreSQL CPU per message over an outbox row's life, per table layout (variants.ts): insert (one
 * row per transaction, 4 producers), lease claim, mark sent, locked claim + mark in one transaction
 * (the relay's default on PostgreSQL), purge, and the VACUUM each phase leaves behind (autovacuum is
 * off on the bench server, so the cost is charged where it is caused).
 *
 * CPU is read from /proc twice: the bench's own backends (exact, what the statements cost) and all
 * postgres processes (adds WAL writer, checkpointer and anything else the server did meanwhile).
 *
 * Env: N (default 50000), VARIANTS (comma list, default all), PG_URL, KEEP=1 keeps the schemas.
 * Run: npx tsx bench/schema-prototype/run.ts
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startCpuMeter } from '../lib/cpu-usage.js';
import { HEADERS, PARTITION_SPAN, PAYLOAD_TEXT as PAYLOAD, VARIANTS, type Variant } from './variants.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(process.env.N ?? 50_000);
const PRODUCERS = 4;
const BATCH = 500;
const PLAN = 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL synchronous_commit = off';

/** CPU ms so far (utime + stime) of these backend pids. */
function backendMs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

interface Phase {
  readonly phase: string;
  readonly own: number; // µs per message, own backends
  readonly all: number; // µs per message, all postgres processes
  readonly ms: number;
}

class Bench {
  readonly phases: Phase[] = [];
  private clock = 1_000_000; // created_at / now in the bench's own time: one tick per message

  constructor(
    private readonly v: Variant,
    private readonly s: string,
    private readonly clients: pg.Client[],
    private readonly pids: number[],
  ) {}

  private async measure(phase: string, work: () => Promise<void>): Promise<void> {
    const meter = startCpuMeter(() => []);
    const before = backendMs(this.pids);
    const t0 = performance.now();
    await work();
    const ms = performance.now() - t0;
    const own = ((backendMs(this.pids) - before) * 1000) / N;
    const spent = meter.stop({ foreign: new Set(), mine: new Set(this.pids) });
    const all = spent ? (spent.postgres * 1000) / N : NaN;
    this.phases.push({ phase, own, all, ms });
  }

  private vacuum(after: string): Promise<void> {
    return this.measure(`vacuum after ${after}`, async () => {
      for (const t of this.v.tables(this.s)) await this.clients[0]!.query(`VACUUM ${t}`);
    });
  }

  /**
   * N one-row business transactions, with the outbox insert (`outbox`) or without (the baseline the
   * insert phase is reported against: the user's transaction and its commit are not the outbox's cost).
   */
  async insert(label: string, outbox = true): Promise<void> {
    const text = this.v.insert(this.s);
    const name = `ins_${this.v.name}`;
    let next = 0;
    await this.measure(outbox ? `insert (${label})` : 'business transaction alone', async () => {
      await Promise.all(
        this.clients.slice(0, PRODUCERS).map(async (c) => {
          while (next < N) {
            next++;
            const at = this.clock++;
            // No wait for the WAL flush: on this shared VM the flush's CPU swamps the statement's, and it is the
            // user's commit either way (one flush per transaction, with or without the outbox row).
            await c.query('BEGIN; SET LOCAL synchronous_commit = off');
            const id = randomUUID();
            await c.query({
              name: 'biz',
              text: `INSERT INTO ${this.s}.orders (id, amount) VALUES ($1, $2)`,
              values: [id, at],
            });
            if (outbox) {
              const res = await c.query({
                name,
                text,
                values: this.v.insertValues?.(id, at) ?? [
                  id,
                  'order.placed',
                  id,
                  'orders',
                  id,
                  1,
                  HEADERS,
                  PAYLOAD,
                  at,
                ],
              });
              if (res.rowCount !== 1) throw new Error('insert did not insert');
            }
            await c.query('COMMIT');
          }
        }),
      );
    });
    if (outbox) await this.vacuum(`insert (${label})`);
  }

  async leaseClaimThenMark(): Promise<void> {
    const c = this.clients[0]!;
    const claimed: number[][] = [];
    const now = this.clock + 1;
    await this.measure('claim (lease)', async () => {
      for (;;) {
        await c.query(`BEGIN; ${PLAN}`);
        const { rows } = await c.query({
          name: `lease_${this.v.name}`,
          text: this.v.claimLease(this.s),
          values: [now, BATCH, now + 60_000, 'relay-1'],
        });
        await c.query('COMMIT');
        if (rows.length === 0) break;
        claimed.push(rows.map((r: { seq: string }) => Number(r.seq)));
      }
    });
    if (claimed.flat().length !== N) throw new Error(`lease claimed ${claimed.flat().length}`);
    await this.vacuum('claim (lease)');
    await this.measure('mark sent', async () => {
      for (const seqs of claimed) {
        const res = await c.query({ name: `mark_${this.v.name}`, text: this.v.markSent(this.s), values: [seqs, now] });
        // The built statement reports its count as a row.
        const marked = res.rows[0]?.n === undefined ? res.rowCount : Number(res.rows[0].n);
        if (marked !== seqs.length) throw new Error(`marked ${marked} of ${seqs.length}`);
      }
    });
    await this.vacuum('mark sent');
  }

  async lockedClaimAndMark(): Promise<void> {
    const c = this.clients[0]!;
    const now = this.clock + 1;
    let total = 0;
    await this.measure('claim (locked) + mark', async () => {
      for (;;) {
        await c.query(`BEGIN; ${PLAN}; SET LOCAL idle_in_transaction_session_timeout = 30000`);
        const { rows } = await c.query({
          name: `locked_${this.v.name}`,
          text: this.v.claimLocked(this.s),
          values: [now, BATCH],
        });
        if (rows.length > 0) {
          const seqs = rows.map((r: { seq: string }) => Number(r.seq));
          await c.query({ name: `mark_${this.v.name}`, text: this.v.markSent(this.s), values: [seqs, now] });
        }
        await c.query('COMMIT');
        if (rows.length === 0) break;
        total += rows.length;
      }
    });
    if (total !== N) throw new Error(`locked claimed ${total}`);
    await this.vacuum('claim (locked) + mark');
  }

  /** Everything sent goes (both batches of N), reported per message of one batch, then halved. */
  async purge(): Promise<void> {
    const c = this.clients[0]!;
    const before = this.clock + 10;
    await this.measure('purge (2N rows)', async () => {
      const step = this.v.purgeStep?.(this.s);
      if (step) {
        for (;;) {
          await c.query(`BEGIN; ${PLAN}`);
          const { rows } = await c.query({ name: `purge_${this.v.name}`, text: step, values: [before, 1000] });
          await c.query('COMMIT');
          if (Number(rows[0].n) === 0) break;
        }
      } else {
        for (const stmt of await partitionsToDrop(c, this.s, before)) await c.query(stmt);
      }
    });
    await this.vacuum('purge');
  }
}

/** V2: partitions whose whole range lies before `before` and that no pending row still points into. */
async function partitionsToDrop(c: pg.Client, s: string, before: number): Promise<string[]> {
  const { rows } = await c.query<{ name: string; upper: string }>(
    `SELECT p.relname AS name, (regexp_match(pg_get_expr(p.relpartbound, p.oid), 'TO \\(''?(\\d+)'))[1] AS upper
     FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
     WHERE i.inhparent = '${s}.outbox_messages'::regclass`,
  );
  const drop: string[] = [];
  for (const r of rows) {
    const upper = Number(r.upper);
    if (!(upper <= before)) continue;
    const lower = upper - PARTITION_SPAN;
    const left = await c.query(`SELECT 1 FROM ${s}.outbox_pending WHERE created_at >= $1 AND created_at < $2 LIMIT 1`, [
      lower,
      upper,
    ]);
    if (left.rowCount === 0) drop.push(`DROP TABLE ${s}.${r.name}`);
  }
  return drop;
}

async function runVariant(v: Variant): Promise<Phase[]> {
  const s = `schemaproto_${v.name.toLowerCase().replace(/[^a-z0-9]/g, '')}_${Date.now().toString(36)}`;
  const clients: pg.Client[] = [];
  for (let i = 0; i < PRODUCERS; i++) {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    clients.push(c);
  }
  const pids = await Promise.all(
    clients.map(async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid),
  );
  const admin = clients[0]!;
  await admin.query(`CREATE SCHEMA ${s}`);
  try {
    for (const stmt of v.setup(s)) await admin.query(stmt);
    if (v.name === 'V2') {
      // Partitions for the bench's whole clock range: 3N transactions from 1,000,000.
      for (let lo = 1_000_000; lo < 1_000_000 + 3 * N + PARTITION_SPAN; lo += PARTITION_SPAN) {
        await admin.query(
          `CREATE TABLE ${s}.outbox_messages_${lo} PARTITION OF ${s}.outbox_messages FOR VALUES FROM (${lo}) TO (${lo + PARTITION_SPAN})
           WITH (fillfactor = 50, autovacuum_enabled = false)`,
        );
      }
    }
    await admin.query(`CREATE TABLE ${s}.orders (id UUID PRIMARY KEY, amount BIGINT NOT NULL)`);
    const b = new Bench(v, s, clients, pids);
    await b.insert('baseline', false);
    await b.insert('lease batch');
    await b.leaseClaimThenMark();
    await b.insert('locked batch');
    await b.lockedClaimAndMark();
    await b.purge();
    return b.phases;
  } finally {
    if (process.env.KEEP !== '1') await admin.query(`DROP SCHEMA ${s} CASCADE`);
    await Promise.all(clients.map((c) => c.end()));
  }
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

async function main(): Promise<void> {
  const names = process.env.VARIANTS?.split(',') ?? Object.keys(VARIANTS);
  const results = new Map<string, Phase[]>();
  for (const name of names) {
    const v = VARIANTS[name];
    if (!v) throw new Error(`unknown variant ${name}`);
    console.error(`${name}: ${v.about}`);
    const phases = await runVariant(v);
    console.error(JSON.stringify({ variant: name, N, phases }));
    results.set(name, phases);
  }
  // Life of a message on the relay's default path: insert (extra over the business transaction), locked
  // claim + mark, purge (half of 2N), their vacuums.
  console.log(
    `N=${N}, 1 KiB payloads, ${PRODUCERS} producers, batches of ${BATCH}; µs per message: own backends / all postgres`,
  );
  const phases = [...results.values()][0]!.map((p) => p.phase);
  console.log(`| phase | ${names.join(' | ')} |`);
  console.log(`| --- | ${names.map(() => '---').join(' | ')} |`);
  for (const ps of results.values()) {
    // Insert phases are reported as the extra over the business transaction alone.
    const base = ps[0]!;
    for (const [i, p] of ps.entries()) {
      if (p.phase.startsWith('insert')) ps[i] = { ...p, own: p.own - base.own, all: p.all - base.all };
    }
  }
  for (const [i, phase] of phases.entries()) {
    const cells = names.map((n) => {
      const p = results.get(n)![i]!;
      const k = phase.startsWith('purge') || phase === 'vacuum after purge' ? 0.5 : 1;
      return `${f1(p.own * k)} / ${f1(p.all * k)}`;
    });
    console.log(`| ${phase} | ${cells.join(' | ')} |`);
  }
  const life = (n: string, pick: (p: Phase) => number) => {
    const ps = results.get(n)!;
    const get = (prefix: string) =>
      ps.filter((p) => p.phase.startsWith(prefix) || p.phase === `vacuum after ${prefix}`);
    const sum = (xs: Phase[], k = 1) => xs.reduce((a, p) => a + pick(p) * k, 0);
    return sum(get('insert (locked batch)')) + sum(get('claim (locked) + mark')) + sum(get('purge'), 0.5);
  };
  console.log(
    `| life (insert + locked claim/mark + purge, with vacuums) | ${names.map((n) => `${f1(life(n, (p) => p.own))} / ${f1(life(n, (p) => p.all))}`).join(' | ')} |`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
