import pg from 'pg';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { pgExecutor } from '../../src/stores/postgres/executor.js';
import { claimOutbox, CLAIM_PLAN_SETTINGS, lockDueOutbox } from '../../src/stores/postgres/outbox-sql.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { testEnv, uniqueName } from '../support/env.js';

/** PostgreSQL store in its own schema, dropped at teardown; `pipeline: false` for a plain pg pool. */
export async function makePostgresFixture(
  label = 'pg',
  { pipeline = true }: { pipeline?: boolean } = {},
): Promise<StoreFixture & { pool: pg.Pool; schema: string; store: PostgresStore }> {
  const schema = uniqueName(label);
  // Pipelined by default, as the pool the store creates itself is.
  const pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 32, pipeline } as pg.PoolConfig);
  pool.on('error', () => undefined); // idle clients cut by a server restart must not crash the run
  const store = await createPostgresStore({ pool, schema });
  await store.migrate();
  return {
    store,
    pool,
    schema,
    concurrentWriters: true,
    claimIndex: 'surety_outbox_pending_due',
    childEnv: { SURETY_STORE: 'postgres', SURETY_PG_URL: testEnv.postgresUrl, SURETY_PG_SCHEMA: schema },
    async begin() {
      const client = await pool.connect();
      await client.query('BEGIN');
      return {
        tx: pgExecutor(client),
        async commit() {
          await client.query('COMMIT');
          client.release();
        },
        async rollback() {
          await client.query('ROLLBACK');
          client.release();
        },
      };
    },
    async claimPlan(ordered) {
      const client = await pool.connect();
      try {
        // Statistics that say "empty table" tempt the planner into a sequential scan.
        await client.query(`ALTER TABLE ${store.outbox.outboxTable} SET (autovacuum_enabled = false)`);
        await client.query(`BEGIN; ${CLAIM_PLAN_SETTINGS}`);
        // Both claims: the lease claim and the locked claim (see locked-batch.ts).
        const lease = await client.query(`EXPLAIN ${claimOutbox(store.tables, ordered)}`, [10_000, 500, 20_000, 'x']);
        const locked = await client.query(`EXPLAIN ${lockDueOutbox(store.tables, ordered)}`, [10_000, 500]);
        await client.query('ROLLBACK');
        return [...lease.rows, ...locked.rows].map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      } finally {
        client.release();
      }
    },
    async teardown() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
