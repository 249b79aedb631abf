import type { Store } from '../../src/ports/store.js';
import type { TableNames } from '../../src/stores/sql/naming.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { holdOpen } from '../support/hold-open.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { makeMysqlFixture } from '../stores/mysql-fixture.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import type { OrmFixture } from './orm-cases.js';

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

/** The dialect's placeholder for the `n`th value (1-based). */
export const placeholder = (dialect: Dialect, n: number): string => (dialect === 'postgres' ? `$${n}` : '?');

/** What an ORM fixture adds to the dialect store's: the adapter's store, helper, accessor and own statements. */
export type OrmParts = Pick<OrmFixture, 'store' | 'transaction' | 'trxOf' | 'run'> & { close(): Promise<void> };

/** The fixture of an ORM adapter over the dialect store `inner`: transactions held open through the ORM store. */
export function ormFixture(dialect: Dialect, inner: StoreFixture, parts: OrmParts): OrmFixture {
  const { close, ...adapter } = parts;
  return {
    ...adapter,
    dialect,
    concurrentWriters: inner.concurrentWriters,
    childEnv: inner.childEnv,
    begin: () => holdOpen((work) => parts.store.transaction(work)),
    async teardown() {
      await close();
      await inner.teardown();
    },
  };
}
