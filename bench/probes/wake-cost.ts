/**
 * What a wake-up costs on this machine: 100-byte TCP round trips between this process and a child
 * echo process, back to back (both stay awake) and with an idle gap before each (both fall asleep
 * and are woken by the packet). Prints CPU µs per round trip on each side, from process.cpuUsage
 * and the child's own report. Run with `npx tsx bench/probes/wake-cost.ts [round trips]`.
 *
 * A pipeline of several processes pays this once per hop: at a trickle, where every hop finds its
 * process asleep, the hops a message takes decide its CPU more than the work done at each.
 */
import { fork } from 'node:child_process';
import net from 'node:net';

const N = Number(process.argv[2] ?? 2_000);
const GAPS_MS = [0, 1, 5];

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

if (process.argv[2] === 'echo') {
  const server = net.createServer((s) => s.on('data', (d) => s.write(d)));
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as net.AddressInfo).port }));
  process.on('message', (m: string) => m === 'cpu' && process.send!({ cpu: cpuUs() }));
} else {
  const child = fork(process.argv[1]!, ['echo'], { execArgv: process.execArgv });
  const next = () => new Promise<Record<string, number>>((resolve) => child.once('message', resolve));
  const { port } = await next();
  const socket = net.connect(port!, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.setNoDelay(true);
  const payload = Buffer.alloc(100);
  const roundTrip = () =>
    new Promise<void>((resolve) => {
      socket.once('data', () => resolve());
      socket.write(payload);
    });
  const childCpu = async () => {
    child.send('cpu');
    return (await next()).cpu!;
  };
  console.log('gap before each (ms) | round trip (µs, wall) | CPU µs per round trip: this side | echo side');
  for (const gap of GAPS_MS) {
    const n = gap ? Math.max(200, Math.round(N / (gap * 2))) : N;
    const [mine, theirs] = [cpuUs(), await childCpu()];
    let wall = 0;
    for (let i = 0; i < n; i++) {
      if (gap) await new Promise((resolve) => setTimeout(resolve, gap));
      const t = performance.now();
      await roundTrip();
      wall += performance.now() - t;
    }
    // The timer that ends each gap is this side's own wake-up: it belongs to the measurement.
    const ownUs = (cpuUs() - mine) / n;
    const echoUs = ((await childCpu()) - theirs) / n;
    console.log(`${gap} | ${((wall * 1000) / n).toFixed(0)} | ${ownUs.toFixed(0)} | ${echoUs.toFixed(0)}`);
  }
  socket.destroy();
  child.kill();
}
