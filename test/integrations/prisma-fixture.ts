import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  prismaStore,
  prismaTransaction,
  prismaTransactionOf,
  type PrismaTransactionLike,
} from '../../src/integrations/prisma/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture, type DatabaseAt } from './orm-fixture.js';
import { PrismaClient as MysqlClient } from './prisma/generated/mysql/client.js';
import { PrismaClient as PostgresClient } from './prisma/generated/postgres/client.js';
import { PrismaClient as SqliteClient } from './prisma/generated/sqlite/client.js';

export type PrismaDialect = DatabaseAt['dialect'];

/** Interactive transactions the cases hold open longer than Prisma's 5 s default, and wait for on two busy cores. */
const options = { maxWait: 20_000, timeout: 60_000 };

/** The MariaDB driver's URL for the store's mysql2 one, with a pool of its own size. */
const mariadbUrl = (url: string) =>
  `${url.replace(/^mysql:/, 'mariadb:')}${url.includes('?') ? '&' : '?'}connectionLimit=8`;

/** A Prisma client on the dialect's driver adapter, with connections of its own to the store's database. */
function prismaClient(at: DatabaseAt): PostgresClient | MysqlClient | SqliteClient {
  if (at.dialect === 'postgres')
    return new PostgresClient({ adapter: new PrismaPg({ connectionString: at.url, max: 8 }) });
  if (at.dialect === 'mysql') return new MysqlClient({ adapter: new PrismaMariaDb(mariadbUrl(at.url)) });
  return new SqliteClient({ adapter: new PrismaBetterSqlite3({ url: `file:${at.path}`, timeout: 5000 }) });
}

/** The dialect store with its transactions through a Prisma client on the driver adapter of `dialect`. */
export async function makePrismaFixture(dialect: PrismaDialect): Promise<OrmFixture> {
  const { inner, at } = await dialectFixture(dialect, `prisma_${dialect}`);
  const prisma = prismaClient(at);
  const store = prismaStore(inner.store, prisma, options);
  return ormFixture(dialect, inner, {
    store,
    transaction: (outbox, work) => prismaTransaction(prisma, outbox, (trx, tx) => work(tx, trx), options),
    trxOf: (tx) => prismaTransactionOf<object>(tx),
    run: async (trx, sql, values) => {
      await (trx as PrismaTransactionLike).$executeRawUnsafe(sql, ...values);
    },
    close: () => prisma.$disconnect(),
  });
}
