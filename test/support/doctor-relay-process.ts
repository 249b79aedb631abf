/**
 * A relay in its own process, for the doctor's "relay stopped" fault: the test SIGKILLs it, so its
 * heartbeat row stays behind with the time it was last seen.
 * Env: SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_AMQP_URL, SURETY_EXCHANGE. Prints "ready <relayId>"
 * once a heartbeat with a claim is in the table.
 */
import { silentLogger } from '../../src/core/logger.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const env = (n: string) => {
  const v = process.env[n];
  if (v === undefined) throw new Error(`${n} is required`);
  return v;
};
const store = await createPostgresStore({
  connectionString: env('SURETY_PG_URL'),
  schema: env('SURETY_PG_SCHEMA'),
});
const transport = await createRabbitMqTransport({ url: env('SURETY_AMQP_URL'), exchange: env('SURETY_EXCHANGE') });
await transport.waitUntilReady(10_000);
const relay = new OutboxRelay({
  store,
  publisher: transport,
  logger: silentLogger,
  retention: false,
  pollIntervalMs: 50,
  heartbeatMs: 100,
});
await relay.start();
const deadline = Date.now() + 30_000;
while (!(await store.heartbeats.relays()).some((r) => r.relayId === relay.id && r.lastClaimedAt !== null)) {
  if (Date.now() > deadline) throw new Error('no heartbeat with a claim within 30 s');
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write(`ready ${relay.id}\n`);
