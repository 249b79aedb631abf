import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { createSqliteStore, sqliteTransaction, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { claimRow, indexNames, selectClaimable } from '../../src/stores/sqlite/outbox-sql.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { uniqueName } from '../support/env.js';

const PREFIX = 'surety_';

/** SQLite store in a temporary file of its own, removed at teardown. */
export async function makeSqliteFixture(
  label = 'sqlite',
): Promise<StoreFixture & { path: string; store: SqliteStore }> {
  const path = join(tmpdir(), `${uniqueName(label)}.sqlite`);
  const store = await createSqliteStore({ path, tablePrefix: PREFIX });
  await store.migrate();
  return {
    store,
    path,
    // One writer at a time: a second open transaction waits for the first, so the suite's
    // late-commit test (two transactions committing out of order) cannot happen on SQLite.
    concurrentWriters: false,
    claimIndex: indexNames(PREFIX).due,
    childEnv: { SURETY_STORE: 'sqlite', SURETY_SQLITE_PATH: path, SURETY_SQLITE_PREFIX: PREFIX },
    // The transaction an application holds open across awaits on the store's own Database.
    async begin() {
      let decide!: (commit: boolean) => void;
      const decision = new Promise<boolean>((resolve) => (decide = resolve));
      let opened!: (tx: SqlExecutor) => void;
      const ready = new Promise<SqlExecutor>((resolve) => (opened = resolve));
      const rolledBack = new Error('rolled back by the fixture');
      const done = sqliteTransaction(store.db, async (tx) => {
        opened(tx);
        if (!(await decision)) throw rolledBack;
      });
      const tx = await Promise.race([ready, done.then(() => ready)]);
      return {
        tx,
        async commit() {
          decide(true);
          await done;
        },
        async rollback() {
          decide(false);
          await done.catch((err: unknown) => {
            if (err !== rolledBack) throw err;
          });
        },
      };
    },
    async claimPlan(ordered) {
      // Statistics of an all-pending table make the partial index look useless; INDEXED BY must hold regardless.
      store.db.exec('ANALYZE');
      const plan = (text: string, values: unknown[]) =>
        (store.db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[]).map((r) => r.detail);
      return [
        ...plan(selectClaimable(store.tables, PREFIX, ordered), [10_000, 500]),
        ...plan(claimRow(store.tables), [20_000, 'x', 1]),
      ].join('\n');
    },
    async teardown() {
      await store.close();
      await Promise.all(['', '-wal', '-shm'].map((suffix) => rm(`${path}${suffix}`, { force: true })));
    },
  };
}
