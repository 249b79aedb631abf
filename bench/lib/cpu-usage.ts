/**
 * CPU time per process kind during a measured window, read from /proc (Linux only; elsewhere the meter
 * reads nothing). Kinds: the contender processes (given by pid, with their descendants); PostgreSQL,
 * meaning the contenders' backends (known by the application name they connect with) and the
 * server's own processes (postmaster, WAL writer, checkpointer, autovacuum...); each broker's server
 * (RabbitMQ's Erlang VM and its helpers, Kafka's JVM, nats-server, redis-server); this bench process (reported apart, never in a total); and everything else,
 * other sessions' backends among it, so that a shared machine's other load stays out of PostgreSQL's
 * figure. Close the window before a contender closes its connections: a process that exits inside
 * the window takes its CPU with it.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The broker servers told apart, by process name. */
export type BrokerKind = 'rabbitmq' | 'kafka' | 'nats' | 'redis';
export type CpuKind = 'contender' | 'postgres' | BrokerKind | 'parent' | 'other';
/**
 * CPU ms by kind, and of PostgreSQL's share the part its backends serving the contenders spent; and
 * by kind the times a thread went to sleep waiting (voluntary context switches: each one a wake-up
 * later, which on a virtual machine costs far more CPU than the work it wakes for).
 */
export type CpuMs = Record<CpuKind, number> & { postgresBackends: number; sleeps: Record<CpuKind, number> };

interface Sample {
  readonly comm: string;
  readonly ppid: number;
  readonly ms: number;
  /** Voluntary context switches of all its threads (exited ones not counted). */
  readonly sleeps: number;
}

/** Sum of voluntary_ctxt_switches over the process's threads. */
function sleepsOf(pid: string): number {
  let total = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    try {
      const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
      if (m) total += Number(m[1]);
    } catch {
      // the thread exited meanwhile
    }
  }
  return total;
}

// USER_HZ: /proc/<pid>/stat counts CPU in ticks of 1/100 s on every Linux architecture Node runs on.
const MS_PER_TICK = 10;

function sampleOf(pid: string): Sample | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // exited meanwhile
  }
  // The command name is in parentheses and may itself hold spaces; fields follow the last ')'.
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  const fields = stat.slice(close + 2).split(' ');
  // utime + stime cover every thread, exited ones too (schedstat would give the main thread's only).
  const ms = (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  return { comm, ppid: Number(fields[1]), ms, sleeps: sleepsOf(pid) };
}

function snapshot(): Map<number, Sample> | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  const out = new Map<number, Sample>();
  for (const pid of pids) {
    const s = sampleOf(pid);
    if (s) out.set(Number(pid), s);
  }
  return out;
}

function isRabbitMq(comm: string): boolean {
  return comm.startsWith('beam') || comm.startsWith('erl_child') || comm === 'epmd' || comm === 'inet_gethost';
}

/** A JVM is Kafka's only when its command line runs the broker's main class (Maven's JVM is not). */
function isKafka(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('kafka.Kafka');
  } catch {
    return false;
  }
}

function brokerKind(pid: number, comm: string): BrokerKind | undefined {
  if (isRabbitMq(comm)) return 'rabbitmq';
  if (comm === 'nats-server') return 'nats';
  if (comm === 'redis-server') return 'redis';
  if (comm === 'java' && isKafka(pid)) return 'kafka';
  return undefined;
}

/** The pids given and every process descending from them. */
function family(roots: readonly number[], procs: Map<number, Sample>): Set<number> {
  const out = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, s] of procs) {
      if (!out.has(pid) && out.has(s.ppid)) {
        out.add(pid);
        grew = true;
      }
    }
  }
  return out;
}

/** What PostgreSQL says of its processes when the window closes (pg_stat_activity). */
export interface PostgresProcesses {
  /** Client backends of other sessions: not the contenders' load. */
  readonly foreign: ReadonlySet<number>;
  /** The contenders' client backends. */
  readonly mine: ReadonlySet<number>;
}

export interface CpuMeter {
  /** CPU ms spent since the meter started, by kind; undefined without /proc. */
  stop(postgres: PostgresProcesses): CpuMs | undefined;
}

/** Starts a window; `contenders()` names the contender pids when the window closes. */
export function startCpuMeter(contenders: () => readonly number[]): CpuMeter {
  const before = snapshot();
  return {
    stop(postgres) {
      const after = snapshot();
      if (!before || !after) return undefined;
      const mine = family(contenders(), after);
      const zero = () => ({ contender: 0, postgres: 0, parent: 0, other: 0, rabbitmq: 0, kafka: 0, nats: 0, redis: 0 });
      const spent: CpuMs = { ...zero(), postgresBackends: 0, sleeps: zero() };
      for (const [pid, now] of after) {
        // A process started inside the window counts from zero.
        const ms = now.ms - (before.get(pid)?.ms ?? 0);
        const kind: CpuKind =
          pid === process.pid
            ? 'parent'
            : mine.has(pid)
              ? 'contender'
              : now.comm === 'postgres' || now.comm === 'postmaster'
                ? postgres.foreign.has(pid)
                  ? 'other'
                  : 'postgres'
                : (brokerKind(pid, now.comm) ?? 'other');
        spent[kind] += ms;
        spent.sleeps[kind] += now.sleeps - (before.get(pid)?.sleeps ?? 0);
        if (postgres.mine.has(pid)) spent.postgresBackends += ms;
      }
      return spent;
    },
  };
}

/**
 * Microseconds per message by kind, and the total of the processes that serve the contender: itself,
 * PostgreSQL and `broker`'s server (RabbitMQ unless said otherwise).
 */
export function perMessage(ms: CpuMs, messages: number, broker: BrokerKind = 'rabbitmq') {
  const us = (v: number) => (v * 1000) / messages;
  return {
    contender: us(ms.contender),
    postgres: us(ms.postgres),
    /** The contenders' backends alone: on a shared machine the server's own processes carry others' load too. */
    postgresBackends: us(ms.postgresBackends),
    rabbitmq: us(ms.rabbitmq),
    /** The server of `broker`. */
    broker: us(ms[broker]),
    total: us(ms.contender + ms.postgres + ms[broker]),
    other: us(ms.other),
    parent: us(ms.parent),
  };
}
