import Database from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { kyselyStore, kyselyTransaction, kyselyTransactionOf } from '../../src/integrations/kysely/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture, type Dialect } from './orm-fixture.js';

/** A Kysely database of its own connections to the dialect store's database. */
export function kyselyDb(at: {
  dialect: Dialect;
  url: string;
  path: string;
}): Kysely<Record<string, Record<string, unknown>>> {
  if (at.dialect === 'postgres')
    return new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: at.url, max: 8 }) }) });
  if (at.dialect === 'mysql')
    return new Kysely({ dialect: new MysqlDialect({ pool: createPool({ uri: at.url, connectionLimit: 8 }) }) });
  const database = new Database(at.path);
  database.pragma('busy_timeout = 5000');
  return new Kysely({ dialect: new SqliteDialect({ database }) });
}

/** The dialect store with its transactions through Kysely, and the Kysely helpers the cases call. */
export async function makeKyselyFixture(dialect: Dialect): Promise<OrmFixture> {
  const { inner, at } = await dialectFixture(dialect, `kysely_${dialect}`);
  const db = kyselyDb(at);
  const store = kyselyStore(inner.store, db);
  return ormFixture(dialect, inner, {
    store,
    transaction: (outbox, work) => kyselyTransaction(db, outbox, (trx, tx) => work(tx, trx)),
    trxOf: (tx) => kyselyTransactionOf(tx),
    run: async (trx, sql, values) => {
      const { CompiledQuery } = await import('kysely');
      await (trx as Kysely<unknown>).executeQuery(CompiledQuery.raw(sql, [...values]));
    },
    close: () => db.destroy(),
  });
}
