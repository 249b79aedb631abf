import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { runOrmCases } from './orm-cases.js';
import { makePrismaFixture } from './prisma-fixture.js';

// Through @prisma/adapter-pg and @prisma/adapter-better-sqlite3; MariaDB (@prisma/adapter-mariadb) is not covered yet.
for (const dialect of ['postgres', 'sqlite'] as const) {
  runTransactionConformance(`prisma on ${dialect}`, () => makePrismaFixture(dialect));
  runOrmCases(`prisma on ${dialect}`, () => makePrismaFixture(dialect));
}
