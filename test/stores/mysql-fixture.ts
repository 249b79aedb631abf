import mysql from 'mysql2/promise';
import { mysqlExecutor } from '../../src/stores/mysql/executor.js';
import { createMysqlStore, type MysqlStore } from '../../src/stores/mysql/index.js';
import { indexNames, selectClaimable } from '../../src/stores/mysql/outbox-sql.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { testEnv, uniqueName } from '../support/env.js';

/** MySQL/MariaDB store under its own table prefix; its tables are dropped at teardown. */
export async function makeMysqlFixture(
  label = 'mysql',
): Promise<StoreFixture & { pool: mysql.Pool; prefix: string; store: MysqlStore }> {
  const prefix = `${uniqueName(label)}_`;
  // Room for the relay tests, which hold 20 transactions open while a relay claims beside them.
  const pool = mysql.createPool({ uri: testEnv.mysqlUrl, connectionLimit: 32 });
  const store = await createMysqlStore({ pool, tablePrefix: prefix });
  await store.migrate();
  return {
    store,
    pool,
    prefix,
    concurrentWriters: true,
    claimIndex: indexNames(prefix).due,
    childEnv: { SURETY_STORE: 'mysql', SURETY_MYSQL_URL: testEnv.mysqlUrl, SURETY_MYSQL_PREFIX: prefix },
    async begin() {
      const conn = await pool.getConnection();
      await conn.beginTransaction();
      return {
        tx: mysqlExecutor(conn),
        async commit() {
          await conn.commit();
          conn.release();
        },
        async rollback() {
          await conn.rollback();
          conn.release();
        },
      };
    },
    async claimPlan(ordered) {
      // Fresh statistics show status = 'pending' matching every row: left alone, the optimizer would scan.
      await pool.query(`ANALYZE TABLE ${store.outbox.outboxTable}`);
      const [rows] = await pool.query(`EXPLAIN ${selectClaimable(store.tables, prefix, ordered)}`, [10_000, 500]);
      // "key: value" pairs, so a full scan reads "type: ALL", which the suite rejects.
      return (rows as Record<string, unknown>[])
        .map(
          (r) =>
            `${String(r.select_type)} table: ${String(r.table)}, type: ${String(r.type)}, key: ${String(r.key)}, rows: ${String(r.rows)}, extra: ${String(r.Extra)}`,
        )
        .join('\n');
    },
    async teardown() {
      await pool.query(`DROP TABLE IF EXISTS ${Object.values(store.tables).join(', ')}`);
      await pool.end();
    },
  };
}
