// Throwaway: a bare amqplib consumer that only acks (prefetch 1000), in its own process.
import amqp from 'amqplib';
const [amqpUrl, queue, nStr] = process.argv.slice(2);
const n = Number(nStr);
const conn = await amqp.connect(amqpUrl!);
const ch = await conn.createChannel();
await ch.prefetch(1000);
let acked = 0;
let done!: () => void;
const finished = new Promise<void>((r) => (done = r));
process.send!({ ready: true });
await new Promise<void>((r) => process.once('message', () => r()));
const start = performance.now();
await ch.consume(queue!, (m) => {
  if (!m) return;
  ch.ack(m);
  if (++acked === n) done();
});
await finished;
process.send!({ ms: performance.now() - start });
await conn.close();
process.exit(0);
