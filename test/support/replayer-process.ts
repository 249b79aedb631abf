/**
 * A replay job in its own process that SIGKILLs itself inside the handler of the first row it
 * replays, after writing its effect but before the commit: the row is left `replaying` with a lease.
 * Env: SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_GROUP, SURETY_EFFECTS.
 */
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import { createPostgresOutboxStore } from '../../src/stores/postgres/index.js';

const env = (n: string) => process.env[n] ?? '';
const store = await createPostgresOutboxStore({
  connectionString: env('SURETY_PG_URL'),
  schema: env('SURETY_PG_SCHEMA'),
});
const consumer = new Consumer({
  group: env('SURETY_GROUP'),
  store,
  transport: { subscribe: async () => ({ close: async () => undefined }) },
  logger: silentLogger,
}).on('order.created', async (_p, { tx, envelope }) => {
  await tx.query(`INSERT INTO ${env('SURETY_EFFECTS')} (message_id, group_name, note) VALUES ($1, $2, $3)`, [
    envelope.id,
    env('SURETY_GROUP'),
    'killed',
  ]);
  process.kill(process.pid, 'SIGKILL');
});
await new ReplayJob(consumer, { leaseMs: 1_500, concurrency: 1 }).runOnce();
