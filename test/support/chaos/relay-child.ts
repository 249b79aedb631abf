/**
 * A relay in its own process for the chaos test, on the broker SURETY_BROKER names: runs until
 * killed. Env: SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_NS. Prints "ready" once relaying.
 */
import { silentLogger } from '../../../src/core/logger.js';
import { OutboxRelay } from '../../../src/producer/outbox-relay.js';
import { createPostgresStore } from '../../../src/stores/postgres/index.js';
import { brokerFromEnv } from '../brokers/broker-under-test.js';
import { childEnv } from './child-env.js';

const store = await createPostgresStore({
  connectionString: childEnv('SURETY_PG_URL'),
  schema: childEnv('SURETY_PG_SCHEMA'),
});
const transport = await (await brokerFromEnv()).open(childEnv('SURETY_NS'));
// Short backoff, so that what a cut connection or a broker refusal delays comes round within the test.
const relay = new OutboxRelay({
  store,
  publisher: transport,
  logger: silentLogger,
  pollIntervalMs: 200,
  backoff: { initialMs: 50, maxMs: 500 },
  maxAttempts: 1_000,
});
await relay.start();
process.stdout.write('ready\n');
process.once(
  'SIGTERM',
  () =>
    void relay
      .stop()
      .then(() => transport.close())
      .then(() => store.close()),
);
