import type { EntityManager } from '@mikro-orm/core';
import { MikroORM as SqliteOrm } from '@mikro-orm/better-sqlite';
import { MikroORM as MysqlOrm } from '@mikro-orm/mysql';
import { MikroORM as PostgresOrm } from '@mikro-orm/postgresql';
import { mikroOrmExecutor, mikroOrmStore, mikroOrmTransactionOf } from '../../src/integrations/mikro-orm/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture, type DatabaseAt } from './orm-fixture.js';

/** A MikroORM instance of its own connections to the dialect store's database (no entities: raw statements). */
export function mikroOrm(at: DatabaseAt): Promise<{ em: EntityManager; close(force?: boolean): Promise<void> }> {
  const options = { entities: [], discovery: { warnWhenNoEntities: false }, allowGlobalContext: false };
  if (at.dialect === 'postgres') return PostgresOrm.init({ ...options, clientUrl: at.url, pool: { min: 0, max: 8 } });
  if (at.dialect === 'mysql') return MysqlOrm.init({ ...options, clientUrl: at.url, pool: { min: 0, max: 8 } });
  return SqliteOrm.init({ ...options, dbName: at.path });
}

/** The dialect store with its transactions through MikroORM; the helper is `em.transactional` with the hooked commit. */
export async function makeMikroOrmFixture(dialect: DatabaseAt['dialect']): Promise<OrmFixture> {
  const { inner, at } = await dialectFixture(dialect, `mikro_${dialect}`);
  const orm = await mikroOrm(at);
  return ormFixture(dialect, inner, {
    store: mikroOrmStore(inner.store, orm),
    transaction: (outbox, work) => orm.em.transactional((em) => work(mikroOrmExecutor(em, outbox), em)),
    trxOf: (tx) => mikroOrmTransactionOf(tx),
    run: async (trx, sql, values) => {
      // MikroORM's own raw statement, in the transaction of `trx`; it takes `?` placeholders.
      await (trx as EntityManager & { execute(sql: string, params: unknown[]): Promise<unknown> }).execute(
        sql.replace(/\$\d+/g, '?'),
        [...values],
      );
    },
    close: () => orm.close(true),
  });
}
