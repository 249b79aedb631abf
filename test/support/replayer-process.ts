/**
 * A replay job in its own process that SIGKILLs itself inside the handler of the first row it
 * replays, after writing its effect (when SURETY_EFFECTS names a table) but before the commit: the
 * rows it claimed are left `replaying` under its lease (SURETY_LEASE_MS, default 1,500 ms).
 * Env: a fixture's `childEnv` (SURETY_STORE and its connection; PostgreSQL by default), SURETY_GROUP,
 * SURETY_EFFECTS, SURETY_LEASE_MS.
 */
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import { openStoreFromEnv } from './store-from-env.js';

const env = (n: string) => process.env[n] ?? '';
const store = await openStoreFromEnv();
const effects = env('SURETY_EFFECTS');
const values = store.dialect === 'postgres' ? '$1, $2, $3' : '?, ?, ?';
const consumer = new Consumer({
  group: env('SURETY_GROUP'),
  store,
  transport: { subscribe: async () => ({ close: async () => undefined }) },
  logger: silentLogger,
}).on('order.created', async (_p, { tx, envelope }) => {
  if (effects) {
    await tx.query(`INSERT INTO ${effects} (message_id, group_name, note) VALUES (${values})`, [
      envelope.id,
      env('SURETY_GROUP'),
      'killed',
    ]);
  }
  process.kill(process.pid, 'SIGKILL');
});
await new ReplayJob(consumer, { leaseMs: Number(env('SURETY_LEASE_MS') || 1_500), concurrency: 1 }).runOnce();
