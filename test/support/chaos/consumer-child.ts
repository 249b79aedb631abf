/**
 * A consumer and its replay job in their own process for the chaos test, on the broker SURETY_BROKER
 * names: runs until killed. Each `chaos.item` writes one effect row in the handler's transaction.
 * An item marked `flaky` fails until the test inserts the fix row, so it goes through the
 * dead-letter table and comes back by replay. Env: SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_NS, SURETY_GROUP.
 */
import { Consumer } from '../../../src/consumer/consumer.js';
import { ReplayJob } from '../../../src/consumer/replay-job.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createPostgresStore } from '../../../src/stores/postgres/index.js';
import { brokerFromEnv } from '../brokers/broker-under-test.js';
import { childEnv } from './child-env.js';

const schema = childEnv('SURETY_PG_SCHEMA');
const store = await createPostgresStore({ connectionString: childEnv('SURETY_PG_URL'), schema });
const transport = await (await brokerFromEnv()).open(childEnv('SURETY_NS'));
const consumer = new Consumer({
  group: childEnv('SURETY_GROUP'),
  store,
  transport,
  logger: silentLogger,
  deadLetters: { scheduleMs: [100, 300, 600], maxAttempts: 1_000 },
}).on('chaos.item', async (item: { n: number; flaky: boolean }, { tx, envelope }) => {
  if (item.flaky) {
    const { rows } = await tx.query(`SELECT 1 FROM "${schema}".fixed`);
    if (rows.length === 0) throw new Error(`item ${item.n}: the bug is not fixed yet`);
  }
  await tx.query(`INSERT INTO "${schema}".effects (n, message_id) VALUES ($1, $2)`, [item.n, envelope.id]);
});
await consumer.start();
const replay = new ReplayJob(consumer, { intervalMs: 100, ratePerSecond: 1_000 });
replay.start();
process.stdout.write('ready\n');
process.once(
  'SIGTERM',
  () =>
    void replay
      .stop()
      .then(() => consumer.stop())
      .then(() => transport.close())
      .then(() => store.close()),
);
