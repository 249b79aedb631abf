// Throwaway: bare ack-only vs Surety consumer with defaults, each in its own process; CPU from /proc.
// Usage: tsx run.ts [N] [reps] ['{"handlerConcurrency":16}']
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import pg from 'pg';
import { createEnvelope } from '../../src/core/envelope.js';
import { CONTENT_TYPE, encodeEnvelope } from '../../src/core/wire.js';
import { createPostgresOutboxStore } from '../../src/stores/postgres/index.js';
import { declareTopology, parkingQueueName } from '../../src/transports/rabbitmq/index.js';

const N = Number(process.argv[2] ?? 20_000);
const REPS = Number(process.argv[3] ?? 2);
const EXTRA = process.argv[4] ?? '';
const APP = `scratch16_${process.pid}`;
const PG = 'postgres://postgres@127.0.0.1:5432/test';
const PG_APP = `${PG}?application_name=${APP}`;
const AMQP = 'amqp://guest:guest@127.0.0.1:5672';
const tag = `s16_${Date.now().toString(36)}`;
const TYPE = 'bench.event';
const PAYLOAD = { data: 'x'.repeat(1024 - 11) };

const ticks = (pid: number) => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // ms
  } catch {
    return 0;
  }
};
const allPg = () => {
  let ms = 0;
  for (const d of require_readdir('/proc'))
    if (/^\d+$/.test(d)) {
      try {
        const s = readFileSync(`/proc/${d}/stat`, 'utf8');
        if (s.includes('(postgres)')) ms += ticks(Number(d));
      } catch {
        // exited meanwhile
      }
    }
  return ms;
};
import { readdirSync as require_readdir } from 'node:fs';

const pool = new pg.Pool({ connectionString: PG });
const conn = await amqp.connect(AMQP);
const admin = await conn.createChannel();
await admin.assertExchange(tag, 'topic', { durable: true });
await declareTopology(admin, { queues: [{ name: tag }], bindings: [{ exchange: tag, queue: tag, pattern: TYPE }] });
const store = await createPostgresOutboxStore({ pool, schema: tag });
await store.migrate();
await pool.query(`CREATE TABLE "${tag}".effects (id UUID PRIMARY KEY, payload JSONB NOT NULL)`);

async function prefill(n: number) {
  console.error('prefill', n);
  const ch = await conn.createConfirmChannel();
  await ch.purgeQueue(tag);
  let inFlight = 0;
  let wake: (() => void) | undefined;
  for (let i = 0; i < n; i++) {
    while (inFlight >= 1000) await new Promise<void>((r) => (wake = r));
    inFlight++;
    const wire = encodeEnvelope(createEnvelope({ type: TYPE, payload: PAYLOAD }));
    ch.publish(
      tag,
      TYPE,
      wire.body,
      { persistent: true, messageId: wire.id, contentType: CONTENT_TYPE, type: TYPE, headers: wire.headers },
      () => {
        inFlight--;
        wake?.();
        wake = undefined;
      },
    );
  }
  await ch.waitForConfirms();
  for (let t = 0; ; t++) {
    const c = (await ch.checkQueue(tag)).messageCount;
    if (c === n) break;
    if (t % 20 === 0) console.error('queue holds', c);
    await new Promise((r) => setTimeout(r, 50));
  }
  await ch.close();
}

async function runChild(file: string, args: string[], pgBackends: boolean) {
  console.error('child', file);
  const child: ChildProcess = fork(new URL(file, import.meta.url).pathname, args, {
    execArgv: ['--import', 'tsx', ...(process.env.CHILD_ARGS ? process.env.CHILD_ARGS.split(' ') : [])],
  });
  const msg = () => new Promise<{ ms: number; batches: number }>((r) => child.once('message', r as never));
  await msg(); // ready
  const pids = async () =>
    pgBackends
      ? (await pool.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP])).rows.map(
          (r) => r.pid as number,
        )
      : [];
  const c0 = ticks(child.pid!);
  const all0 = allPg();
  child.send('go');
  // backends connect lazily: sample their pids shortly after the start, count them from zero (they are new)
  let backends: number[] = [];
  const early = setTimeout(async () => (backends = await pids()), 300);
  const done = msg();
  const { ms, batches } = await done;
  clearTimeout(early);
  if (backends.length === 0) backends = await pids();
  const pgMs = backends.reduce((a, p) => a + ticks(p), 0);
  const c1 = ticks(child.pid!);
  const all1 = allPg();
  await new Promise((r) => child.once('exit', r));
  return {
    rate: Math.round((N / ms) * 1000),
    childUs: ((c1 - c0) * 1000) / N,
    pgUs: (pgMs * 1000) / N,
    allPgUs: ((all1 - all0) * 1000) / N,
    backends: backends.length,
    batches,
  };
}

try {
  for (let r = 0; r < REPS; r++) {
    await prefill(N);
    const bare = await runChild('./child-bare.ts', [AMQP, tag, String(N)], false);
    await prefill(N);
    const s = await runChild('./child-surety.ts', [PG_APP, AMQP, tag, tag, tag, TYPE, String(N), EXTRA], true);
    const rows = (await pool.query(`SELECT count(*)::int AS n FROM "${tag}".effects`)).rows[0].n;
    await pool
      .query(`TRUNCATE "${tag}".effects, "${tag}".inbox`)
      .catch(async () => pool.query(`TRUNCATE "${tag}".effects`));
    console.log(
      `rep ${r}: bare ${bare.rate} msg/s (${bare.childUs.toFixed(1)} µs/msg) | surety ${s.rate} msg/s = ${(s.rate / bare.rate).toFixed(2)} of bare; consumer ${s.childUs.toFixed(1)} µs/msg, its PG backends (${s.backends}) ${s.pgUs.toFixed(1)} µs/msg, all postgres ${s.allPgUs.toFixed(1)} µs/msg; rows ${rows}; batches ${s.batches} (avg ${(N / (s.batches || 1)).toFixed(0)}); load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    );
  }
} finally {
  await admin.deleteQueue(tag).catch(() => undefined);
  await admin.deleteQueue(parkingQueueName(tag)).catch(() => undefined);
  await admin.deleteExchange(tag).catch(() => undefined);
  await conn.close();
  await pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
  await store.close();
  await pool.end();
}
