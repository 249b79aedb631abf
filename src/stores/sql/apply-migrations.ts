import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { Migration } from './migration.js';

/**
 * Applies the migrations not yet recorded in `table`. The caller holds the dialect's migration lock
 * (and, where DDL is transactional, the transaction), so concurrent migrators apply each step once.
 */
export async function applyMigrations(
  exec: SqlExecutor,
  table: string,
  migrations: readonly Migration[],
  placeholder: (n: number) => string,
  now: number,
): Promise<number[]> {
  await exec.query(
    `CREATE TABLE IF NOT EXISTS ${table} (id INTEGER PRIMARY KEY, name VARCHAR(100) NOT NULL, applied_at BIGINT NOT NULL)`,
  );
  const { rows } = await exec.query<{ id: number | string }>(`SELECT id FROM ${table}`);
  const applied = new Set(rows.map((r) => Number(r.id)));
  const done: number[] = [];
  for (const m of migrations) {
    if (applied.has(m.id)) continue;
    for (const step of m.up) {
      if (typeof step === 'string') {
        await exec.query(step);
        continue;
      }
      try {
        await exec.query(step.sql);
      } catch (err) {
        if (!step.alreadyApplied(err)) throw err;
      }
    }
    await exec.query(
      `INSERT INTO ${table} (id, name, applied_at) VALUES (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)})`,
      [m.id, m.name, now],
    );
    done.push(m.id);
  }
  return done;
}
