import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import type { Store } from '../../src/ports/store.js';
import type { TableNames } from '../../src/stores/sql/naming.js';
import type { OpenTransaction, StoreFixture } from '../conformance/outbox-store-suite.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { makeMysqlFixture } from '../stores/mysql-fixture.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';

export type Dialect = 'postgres' | 'mysql' | 'sqlite';

/** Where an ORM connects to reach the dialect store's database: its URL, or the SQLite file. */
export interface DatabaseAt {
  readonly dialect: Dialect;
  readonly url: string;
  readonly path: string;
}

/** The dialect store of the conformance suites, and where its database is. */
export async function dialectFixture(
  dialect: Dialect,
  label: string,
): Promise<{ inner: StoreFixture & { store: Store & { tables: TableNames } }; at: DatabaseAt }> {
  const { testEnv } = await import('../support/env.js');
  if (dialect === 'postgres') {
    const inner = await makePostgresFixture(label);
    return { inner, at: { dialect, url: testEnv.postgresUrl, path: '' } };
  }
  if (dialect === 'mysql') {
    const inner = await makeMysqlFixture(label);
    return { inner, at: { dialect, url: testEnv.mysqlUrl, path: '' } };
  }
  const inner = await makeSqliteFixture(label);
  return { inner, at: { dialect, url: '', path: inner.path } };
}

/**
 * A transaction of `run` (the ORM store's transaction) held open until the test commits or rolls it
 * back, as an application holds one across awaits.
 */
export async function holdOpen(
  run: (work: (tx: SqlExecutor) => Promise<void>) => Promise<void>,
): Promise<OpenTransaction> {
  let decide!: (commit: boolean) => void;
  const decision = new Promise<boolean>((resolve) => (decide = resolve));
  let opened!: (tx: SqlExecutor) => void;
  const ready = new Promise<SqlExecutor>((resolve) => (opened = resolve));
  const rolledBack = new Error('rolled back by the fixture');
  const done = run(async (tx) => {
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
}

/** The dialect's placeholder for the `n`th value (1-based). */
export const placeholder = (dialect: Dialect, n: number): string => (dialect === 'postgres' ? `$${n}` : '?');
