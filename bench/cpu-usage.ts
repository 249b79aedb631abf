/**
 * CPU time spent per message by the broker, the database and this process during a measured run, read
 * from /proc (Linux only; elsewhere the meter reads nothing). On a machine where broker, database and
 * relay share the cores, a throughput ratio is a ratio of these sums, so they say where a ceiling lies.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface CpuPerMessage {
  /** Microseconds of CPU per message, by process kind; undefined when no such process is visible here. */
  readonly rabbitmq: number | undefined;
  readonly postgres: number | undefined;
  readonly self: number;
  readonly other: number;
  /** Cores busy on average over the run, all processes. */
  readonly coresBusy: number;
}

type Kind = 'rabbitmq' | 'postgres' | 'self' | 'other';

// USER_HZ: /proc counts CPU time in ticks of 1/100 s on every Linux architecture Node runs on.
const MS_PER_TICK = 10;

function kindOf(pid: number, comm: string): Kind {
  if (pid === process.pid) return 'self';
  if (comm.startsWith('beam') || comm.startsWith('erl_child') || comm === 'epmd') return 'rabbitmq';
  if (comm === 'postgres' || comm === 'postmaster') return 'postgres';
  return 'other';
}

/** CPU ms so far of every process, or undefined without /proc. */
function read(): Map<number, { kind: Kind; ms: number }> | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  const used = new Map<number, { kind: Kind; ms: number }>();
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // The command name is in parentheses and may itself hold spaces; fields follow the last ')'.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    const kind = kindOf(Number(pid), stat.slice(stat.indexOf('(') + 1, close));
    used.set(Number(pid), { kind, ms: ticks * MS_PER_TICK });
  }
  return used;
}

/** Starts measuring; `stop(messages)` gives the CPU per message since. */
export function startCpuMeter(): { stop(messages: number): CpuPerMessage | undefined } {
  const before = read();
  const started = performance.now();
  return {
    stop(messages) {
      const after = read();
      if (!before || !after) return undefined;
      const wallMs = performance.now() - started;
      // Per process: one started meanwhile counts from zero; one that exited meanwhile is not known.
      const spent = new Map<Kind, number>();
      for (const [pid, now] of after) {
        const ms = now.ms - (before.get(pid)?.ms ?? 0);
        spent.set(now.kind, (spent.get(now.kind) ?? 0) + ms);
      }
      // A broker or database in another PID namespace (a container) or on another host shows no process.
      const perMessage = (k: Kind) => ((spent.get(k) ?? 0) * 1000) / messages;
      const seen = (k: Kind) => (spent.has(k) ? perMessage(k) : undefined);
      const total = [...spent.values()].reduce((a, b) => a + b, 0);
      return {
        rabbitmq: seen('rabbitmq'),
        postgres: seen('postgres'),
        self: perMessage('self'),
        other: perMessage('other'),
        coresBusy: total / wallMs,
      };
    },
  };
}
