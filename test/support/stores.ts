import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { makeMysqlFixture } from '../stores/mysql-fixture.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';

/** Every database Surety supports, for tests that loop over them. */
export const storeFixtures: Record<'postgres' | 'mysql' | 'sqlite', (label?: string) => Promise<StoreFixture>> = {
  postgres: (label) => makePostgresFixture(label),
  mysql: (label) => makeMysqlFixture(label),
  sqlite: (label) => makeSqliteFixture(label),
};
