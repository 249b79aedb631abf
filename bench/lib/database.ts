/**
 * The PostgreSQL side of a scenario: a schema of its own holding Surety's tables (migrated as a user
 * would), a business table and an effects table, dropped at the end.
 */
import pg from 'pg';
import { Outbox } from '../../src/index.js';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { PAYLOAD, PG_URL, TYPE } from './config.js';

export interface Database {
  readonly schema: string;
  readonly pool: pg.Pool;
  readonly store: PostgresStore;
  /** Adds `n` pending messages (1 KiB unless `payload` says otherwise) through Surety's Outbox, 1,000 to a transaction. */
  fillOutbox(n: number, payload?: unknown): Promise<void>;
  /** VACUUM ANALYZE every table of the schema: each backlog starts as one that has sat a while. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function openDatabase(schema: string): Promise<Database> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const store = await createPostgresStore({ connectionString: PG_URL, schema });
  await store.migrate();
  await pool.query(`CREATE TABLE "${schema}".orders (id BIGSERIAL PRIMARY KEY, total INT NOT NULL)`);
  await pool.query(`CREATE TABLE "${schema}".effects (id UUID PRIMARY KEY, total INT NOT NULL)`);
  const outbox = new Outbox({ store });
  return {
    schema,
    pool,
    store,
    async fillOutbox(n, payload = PAYLOAD) {
      for (let i = 0; i < n; i += 1_000) {
        const rows = Math.min(1_000, n - i);
        // Issued at once: the store's pipelined connection sends them in a few round trips.
        await store.transaction((tx) =>
          Promise.all(Array.from({ length: rows }, () => outbox.add(tx, { type: TYPE, payload }))),
        );
      }
    },
    async settle() {
      const { rows } = await pool.query<{ t: string }>(
        `SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = $1`,
        [schema],
      );
      for (const { t } of rows) await pool.query(`VACUUM ANALYZE ${t}`);
    },
    async close() {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

export async function countRows(pool: pg.Pool, table: string): Promise<number> {
  return Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
}
