import type { Store } from '../../src/ports/store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';

/**
 * A consumer's local copy of the producer's customers, beside the store's tables (same schema or
 * prefix), written with the plain upsert a fetchBack example uses: nothing in it guards versions.
 */
export function customersTable(store: Store) {
  const table = store.outbox.outboxTable.replace(/outbox/, 'customers');
  const p = (n: number) => (store.dialect === 'postgres' ? `$${n}` : '?');
  const upsert =
    store.dialect === 'mysql'
      ? `INSERT INTO ${table} (id, name, version) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE name = ?, version = ?`
      : `INSERT INTO ${table} (id, name, version) VALUES (${p(1)}, ${p(2)}, ${p(3)})
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, version = excluded.version`;
  return {
    table,
    create: () =>
      store.transaction((tx) =>
        tx.query(
          `CREATE TABLE ${table} (id VARCHAR(200) PRIMARY KEY, name VARCHAR(200) NOT NULL, version BIGINT NOT NULL)`,
        ),
      ),
    upsert: (tx: SqlExecutor, id: string, name: string, version: number) =>
      tx.query(upsert, store.dialect === 'mysql' ? [id, name, version, name, version] : [id, name, version]),
    remove: (tx: SqlExecutor, id: string) => tx.query(`DELETE FROM ${table} WHERE id = ${p(1)}`, [id]),
    /** The local version, read like any SELECT in the handler's transaction (no lock). */
    async version(tx: SqlExecutor, id: string): Promise<number | undefined> {
      const { rows } = await tx.query<{ version: number | string }>(`SELECT version FROM ${table} WHERE id = ${p(1)}`, [
        id,
      ]);
      return rows[0] ? Number(rows[0].version) : undefined;
    },
    async rows(): Promise<{ id: string; name: string; version: number }[]> {
      const { rows } = await store.transaction((tx) =>
        tx.query<{ id: string; name: string; version: number | string }>(
          `SELECT id, name, version FROM ${table} ORDER BY id`,
        ),
      );
      return rows.map((r) => ({ id: r.id, name: r.name, version: Number(r.version) }));
    },
  };
}

export type CustomersTable = ReturnType<typeof customersTable>;
