/**
 * The relay of the fast-path latency benchmark, in its own process as in production: it learns of
 * commits only through PostgreSQL NOTIFY and reports each confirm time to its parent over IPC.
 */
import { silentLogger } from '../src/core/logger.js';
import { OutboxRelay } from '../src/producer/outbox-relay.js';
import { createPostgresStore } from '../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../src/transports/rabbitmq/index.js';

const [pgUrl, schema, amqpUrl, exchange] = process.argv.slice(2) as [string, string, string, string];
const store = await createPostgresStore({ connectionString: pgUrl, schema });
const transport = await createRabbitMqTransport({ url: amqpUrl, exchange, declareExchange: false });
await transport.waitUntilReady(10_000);
const relay = new OutboxRelay({
  store,
  publisher: transport,
  logger: silentLogger,
  retention: false,
  pollIntervalMs: 60_000, // a poll would hide a broken fast path
  onConfirmed: (row) => process.send!({ id: row.messageId, at: performance.timeOrigin + performance.now() }),
});
await relay.start();
process.send!({ ready: true });
process.on('message', (msg) => {
  if (msg === 'stop') {
    void relay
      .stop()
      .then(() => transport.close())
      .then(() => store.close())
      .then(() => process.exit(0));
  }
});
