import Database from 'better-sqlite3';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as betterSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as mysqlDrizzle } from 'drizzle-orm/mysql2';
import { drizzle as nodePostgres } from 'drizzle-orm/node-postgres';
import { drizzle as postgresJs } from 'drizzle-orm/postgres-js';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
import { drizzleStore, drizzleTransaction, drizzleTransactionOf } from '../../src/integrations/drizzle/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture, type DatabaseAt } from './orm-fixture.js';

export type DrizzleDriver = 'node-postgres' | 'postgres.js' | 'mysql2' | 'better-sqlite3';

export const drizzleDialects: Record<DrizzleDriver, DatabaseAt['dialect']> = {
  'node-postgres': 'postgres',
  'postgres.js': 'postgres',
  mysql2: 'mysql',
  'better-sqlite3': 'sqlite',
};

/** A Drizzle database of its own connections to the dialect store's database, and how to close them. */
export function drizzleDb(driver: DrizzleDriver, at: DatabaseAt): { db: object; close: () => Promise<void> } {
  if (driver === 'node-postgres') {
    const pool = new pg.Pool({ connectionString: at.url, max: 8 });
    return { db: nodePostgres(pool), close: () => pool.end() };
  }
  if (driver === 'postgres.js') {
    const client = postgres(at.url, { max: 8, onnotice: () => undefined });
    return { db: postgresJs(client), close: () => client.end() };
  }
  if (driver === 'mysql2') {
    const pool = mysql.createPool({ uri: at.url, connectionLimit: 8 });
    return { db: mysqlDrizzle(pool), close: () => pool.end() };
  }
  const database = new Database(at.path);
  database.pragma('busy_timeout = 5000');
  return { db: betterSqlite(database), close: async () => void database.close() };
}

/** `text` with one `$n` or `?` per value, as Drizzle SQL. */
function asSql(text: string, values: readonly unknown[]): SQL {
  const parts = text.split(/\$\d+|\?/);
  return sql.join(parts.flatMap((p, i) => (i < values.length ? [sql.raw(p), sql.param(values[i])] : [sql.raw(p)])));
}

/** The dialect store with its transactions through Drizzle on `driver`. */
export async function makeDrizzleFixture(driver: DrizzleDriver): Promise<OrmFixture> {
  const dialect = drizzleDialects[driver];
  const { inner, at } = await dialectFixture(dialect, `drizzle_${driver}`);
  const { db, close } = drizzleDb(driver, at);
  const store = drizzleStore(inner.store, db);
  return ormFixture(dialect, inner, {
    store,
    transaction: (outbox, work) => drizzleTransaction(db, outbox, (trx, tx) => work(tx, trx)),
    trxOf: (tx) => drizzleTransactionOf<object>(tx),
    run: async (trx, text, values) => {
      const query = asSql(text, values);
      if (dialect === 'sqlite') (trx as { run(q: SQL): unknown }).run(query);
      else await (trx as { execute(q: SQL): Promise<unknown> }).execute(query);
    },
    close: close,
  });
}
