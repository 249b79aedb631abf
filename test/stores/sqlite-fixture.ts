import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore, sqliteTransaction, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { claimRow, indexNames, selectClaimable } from '../../src/stores/sqlite/outbox-sql.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { uniqueName } from '../support/env.js';
import { holdOpen } from '../support/hold-open.js';

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
    begin: () => holdOpen((work) => sqliteTransaction(store.db, work)),
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
