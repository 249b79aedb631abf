import knexFactory, { type Knex } from 'knex';
import { knexExecutor, knexStore, knexTransactionOf } from '../../src/integrations/knex/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture, type DatabaseAt } from './orm-fixture.js';

/** A Knex instance of its own connections to the dialect store's database. */
export function knexDb(at: DatabaseAt): Knex {
  if (at.dialect === 'postgres') return knexFactory({ client: 'pg', connection: at.url, pool: { min: 0, max: 8 } });
  if (at.dialect === 'mysql') return knexFactory({ client: 'mysql2', connection: at.url, pool: { min: 0, max: 8 } });
  return knexFactory({ client: 'better-sqlite3', connection: { filename: at.path }, useNullAsDefault: true });
}

/** The dialect store with its transactions through Knex; the helper is `knex.transaction` with the executor's commit hook. */
export async function makeKnexFixture(dialect: DatabaseAt['dialect']): Promise<OrmFixture> {
  const { inner, at } = await dialectFixture(dialect, `knex_${dialect}`);
  const knex = knexDb(at);
  const store = knexStore(inner.store, knex);
  return ormFixture(dialect, inner, {
    store,
    transaction: (outbox, work) => knex.transaction((trx) => work(knexExecutor(trx, outbox), trx)),
    trxOf: (tx) => knexTransactionOf(tx),
    run: async (trx, sql, values) => {
      await (trx as Knex.Transaction).raw(sql.replace(/\$\d+/g, '?'), values as Knex.RawBinding[]);
    },
    close: () => knex.destroy(),
  });
}
