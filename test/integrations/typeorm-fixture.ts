import { DataSource, type EntityManager } from 'typeorm';
import { typeormExecutor, typeormStore, typeormTransactionOf } from '../../src/integrations/typeorm/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture, type DatabaseAt } from './orm-fixture.js';

/** A TypeORM data source of its own connections to the dialect store's database (no entities: raw queries). */
export async function typeormDataSource(at: DatabaseAt): Promise<DataSource> {
  const source =
    at.dialect === 'postgres'
      ? new DataSource({ type: 'postgres', url: at.url, poolSize: 8 })
      : at.dialect === 'mysql'
        ? new DataSource({ type: 'mysql', url: at.url, poolSize: 8 })
        : new DataSource({ type: 'better-sqlite3', database: at.path, timeout: 5000 });
  return source.initialize();
}

/** The dialect store with its transactions through TypeORM; the helper is `dataSource.transaction` with the hooked commit. */
export async function makeTypeormFixture(dialect: DatabaseAt['dialect']): Promise<OrmFixture> {
  const { inner, at } = await dialectFixture(dialect, `typeorm_${dialect}`);
  const source = await typeormDataSource(at);
  return ormFixture(dialect, inner, {
    store: typeormStore(inner.store, source),
    transaction: (outbox, work) => source.transaction((manager) => work(typeormExecutor(manager, outbox), manager)),
    trxOf: (tx) => typeormTransactionOf(tx),
    run: async (trx, sql, values) => {
      await (trx as EntityManager).query(sql, [...values]);
    },
    close: () => source.destroy(),
  });
}
