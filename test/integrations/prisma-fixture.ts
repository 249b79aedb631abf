import { PrismaPg } from '@prisma/adapter-pg';
import { prismaStore, prismaTransaction, prismaTransactionOf } from '../../src/integrations/prisma/index.js';
import type { OrmFixture } from './orm-cases.js';
import { dialectFixture, ormFixture } from './orm-fixture.js';
import { PrismaClient } from './prisma/generated/client.js';

/** Interactive transactions the cases hold open longer than Prisma's 5 s default, and wait for on two busy cores. */
const options = { maxWait: 20_000, timeout: 60_000 };

/** The PostgreSQL dialect store with its transactions through a Prisma client on the driver adapter for pg. */
export async function makePrismaFixture(): Promise<OrmFixture> {
  const { inner, at } = await dialectFixture('postgres', 'prisma_postgres');
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: at.url, max: 8 }) });
  const store = prismaStore(inner.store, prisma, options);
  return ormFixture('postgres', inner, {
    store,
    transaction: (outbox, work) => prismaTransaction(prisma, outbox, (trx, tx) => work(tx, trx), options),
    trxOf: (tx) => prismaTransactionOf<object>(tx),
    run: async (trx, sql, values) => {
      await (trx as PrismaClient).$executeRawUnsafe(sql, ...values);
    },
    close: () => prisma.$disconnect(),
  });
}
