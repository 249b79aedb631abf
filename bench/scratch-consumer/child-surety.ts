// Throwaway: a Surety consumer with DEFAULT options, as a user writes it; reports when N settled.
import { Consumer } from '../../src/consumer/consumer.js';
import type { Subscriber } from '../../src/ports/transport.js';
import { createPostgresOutboxStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const [pgUrl, amqpUrl, exchange, group, schema, type, nStr, extra] = process.argv.slice(2);
const n = Number(nStr);
const options = extra ? JSON.parse(extra) : {};
const store = await createPostgresOutboxStore({ connectionString: pgUrl!, schema });
const transport = await createRabbitMqTransport({ url: amqpUrl!, exchange, declareExchange: false, logger: null });
await transport.waitUntilReady(10_000);
let settled = 0;
let done!: () => void;
const finished = new Promise<void>((r) => (done = r));
const counting: Subscriber = {
  subscribe: (o, handler) =>
    transport.subscribe(o, async (d) => {
      await handler(d);
      if (++settled === n) done();
    }),
};
const insert = `INSERT INTO "${schema}".effects (id, payload) VALUES ($1, $2)`;
const consumer = new Consumer({ group: group!, store, transport: counting, logger: null, ...options }).on(
  type!,
  async (payload, { tx, envelope }) => {
    await tx.query(insert, [envelope.id, payload]);
  },
);
let batches = 0;
const proc = consumer.processor;
const original = proc.process.bind(proc);
proc.process = (items) => {
  batches++;
  return original(items);
};
process.send!({ ready: true });
await new Promise<void>((r) => process.once('message', () => r()));
const start = performance.now();
await consumer.start();
await finished;
const ms = performance.now() - start;
await consumer.stop();
process.send!({ ms, batches });
await transport.close();
await store.close();
process.exit(0);
