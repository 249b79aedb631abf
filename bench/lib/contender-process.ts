/**
 * The parent's side of a contender: a child process running one file of bench/contenders/, started
 * with tsx, that reports `ready` once set up, runs when told `go`, and reports `done` with its result.
 * The CPU window and the clock run from `go` to `done`, and close before the child closes its
 * connections (a process that exits takes its CPU count with it).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PG_URL } from './config.js';
import { startCpuMeter, type CpuMs, type PostgresProcesses } from './cpu-usage.js';

/** The application name every contender's PostgreSQL connections carry (pg reads PGAPPNAME). */
const APP_NAME = `surety-bench-${process.pid}`;

type FromChild = { kind: 'ready' } | { kind: 'done'; result: unknown } | { kind: 'error'; message: string };

export interface Contender {
  readonly pid: number;
  readonly name: string;
  /** The end of what it wrote to stderr, to explain a failure. */
  stderrTail(): string;
  /** Tells it to run; resolves with its result when it reports done. */
  go(args?: unknown): Promise<unknown>;
  /** Tells a run that waits for more to end now with what it has. */
  finish(): void;
  close(): Promise<void>;
}

export interface Measured<R> {
  readonly ms: number;
  readonly cpu: CpuMs | undefined;
  readonly result: R;
}

/** Forks `bench/contenders/<name>.ts` with `args` and resolves once it is ready. */
export async function startContender(name: string, args: unknown): Promise<Contender> {
  const file = fileURLToPath(new URL(`../contenders/${name}.ts`, import.meta.url));
  const child: ChildProcess = fork(file, [JSON.stringify(args)], {
    // BENCH_CPU_PROF=<dir>: each contender writes a V8 CPU profile there when it exits.
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    env: { ...process.env, PGAPPNAME: APP_NAME },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4_000); // the tail, to explain a failure
  });
  let pending: { resolve(v: unknown): void; reject(e: Error): void } | undefined;
  const failed = (why: string) => {
    const err = new Error(`contender ${name}: ${why}\n${stderr}`);
    pending?.reject(err);
    pending = undefined;
  };
  child.on('message', (m: FromChild) => {
    if (m.kind === 'error') return failed(m.message);
    const p = pending;
    pending = undefined;
    p?.resolve(m.kind === 'done' ? m.result : undefined);
  });
  child.on('exit', (code, signal) => {
    if (pending) failed(`exited (${code ?? signal})`);
  });
  const wait = () => new Promise<unknown>((resolve, reject) => (pending = { resolve, reject }));
  await wait(); // ready
  return {
    pid: child.pid!,
    name,
    stderrTail: () => stderr,
    go(goArgs) {
      const done = wait();
      child.send({ kind: 'go', args: goArgs });
      return done;
    },
    finish() {
      if (child.exitCode === null) child.send({ kind: 'finish' });
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ kind: 'close' });
      await exited;
    },
  };
}

/**
 * Runs `main` (whose `go` is timed) while the CPU of `all` contenders is metered; `main` may be one of
 * them or another process's signal that the work is done.
 */
export async function measure<R>(all: readonly Contender[], run: () => Promise<R>): Promise<Measured<R>> {
  const meter = startCpuMeter(() => all.map((c) => c.pid));
  const start = performance.now();
  const result = await run();
  const ms = performance.now() - start;
  return { ms, cpu: meter.stop(await postgresProcesses()), result };
}

/** The client backends, the contenders' and the others' (this query's own among them). */
async function postgresProcesses(): Promise<PostgresProcesses> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number; mine: boolean }>(
      `SELECT pid, application_name IS NOT DISTINCT FROM $1 AS mine FROM pg_stat_activity
       WHERE backend_type = 'client backend'`,
      [APP_NAME],
    );
    return {
      foreign: new Set(rows.filter((r) => !r.mine).map((r) => r.pid)),
      mine: new Set(rows.filter((r) => r.mine).map((r) => r.pid)),
    };
  } finally {
    await client.end();
  }
}

/** Starts a contender, times its one run, closes it. */
export async function runOnce<R>(name: string, args: unknown, goArgs?: unknown): Promise<Measured<R>> {
  const c = await startContender(name, args);
  try {
    return await measure([c], () => c.go(goArgs) as Promise<R>);
  } finally {
    await c.close();
  }
}
