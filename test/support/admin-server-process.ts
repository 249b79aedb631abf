/**
 * An admin server in its own process, for restart tests: PostgreSQL store, one operator token,
 * jobs run here. Prints "ready <url>" when listening; SIGTERM stops it gracefully.
 * Env: SURETY_PG_URL, SURETY_PG_SCHEMA, SURETY_ADMIN_TOKEN, SURETY_LEASE_MS, SURETY_BATCH.
 */
import pg from 'pg';
import { startAdminServer } from '../../src/admin/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};

const pool = new pg.Pool({ connectionString: env('SURETY_PG_URL'), max: 4 });
const store = await createPostgresStore({ pool, schema: env('SURETY_PG_SCHEMA') });
const server = await startAdminServer({
  store,
  tokens: [{ name: 'bulk-operator', role: 'operator', token: env('SURETY_ADMIN_TOKEN') }],
  consoleDir: false,
  port: 0,
  jobs: {
    leaseMs: Number(process.env.SURETY_LEASE_MS ?? '2000'),
    batchSize: Number(process.env.SURETY_BATCH ?? '500'),
    pollIntervalMs: 100,
  },
});
process.stdout.write(`ready ${server.url}\n`);
process.once('SIGTERM', () => {
  void server
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
