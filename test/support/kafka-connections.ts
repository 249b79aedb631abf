import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { testEnv } from './env.js';

const run = promisify(execFile);

/** Host and port of the first test broker. */
export function kafkaBrokerAddress(): { host: string; port: number } {
  const [host, port] = testEnv.kafkaBrokers[0]!.replace(/^kafka:\/\//, '').split(':');
  return { host: host!, port: Number(port) };
}

/** Processes whose environment says SURETY_NS=`ns` (the chaos children), plus this one if `self`. */
function processesOf(ns: string, self: boolean): Set<number> {
  const pids = new Set<number>(self ? [process.pid] : []);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`SURETY_NS=${ns}`))
        pids.add(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/**
 * Cuts, from the broker's side, every connection to the test broker held by the given processes:
 * `ss -K` destroys the broker's end of each socket, so the client sees a reset, as when the broker
 * fails over or a network path drops. Kafka has no admin call to close a client's connection, and
 * its advertised listeners send clients straight to the broker's port, past any proxy. Returns how
 * many were cut.
 */
export async function cutKafkaConnections(options: { ns?: string; self?: boolean }): Promise<number> {
  const { port } = kafkaBrokerAddress();
  const clientPorts = await kafkaClientPorts(options);
  for (const clientPort of clientPorts)
    await run('ss', ['-K', '-tn', 'state', 'established', 'sport', '=', `:${port}`, 'dport', '=', `:${clientPort}`]);
  return clientPorts.length;
}

/** Local ports of the connections to the test broker held by the processes `options` names. */
export async function kafkaClientPorts(options: { ns?: string; self?: boolean }): Promise<number[]> {
  const { port } = kafkaBrokerAddress();
  const pids = options.ns ? processesOf(options.ns, options.self ?? false) : new Set([process.pid]);
  const { stdout } = await run('ss', ['-tnpH', 'state', 'established', 'dport', '=', `:${port}`]);
  const clientPorts: number[] = [];
  for (const line of stdout.split('\n')) {
    const pid = /pid=(\d+)/.exec(line)?.[1];
    const local = /\s(\S+):(\d+)\s+\S+:\d+\s/.exec(line);
    if (pid && local && pids.has(Number(pid))) clientPorts.push(Number(local[2]));
  }
  return clientPorts;
}
