import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { runOrmCases } from './orm-cases.js';
import { makePrismaFixture } from './prisma-fixture.js';

// Through @prisma/adapter-pg, @prisma/adapter-mariadb and @prisma/adapter-better-sqlite3.
for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`prisma on ${dialect}`, () => makePrismaFixture(dialect));
  runOrmCases(`prisma on ${dialect}`, () => makePrismaFixture(dialect));
}
