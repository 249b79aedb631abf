import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { runOrmCases } from './orm-cases.js';
import { makePrismaFixture } from './prisma-fixture.js';

// PostgreSQL through @prisma/adapter-pg; MariaDB and SQLite (their driver adapters) are not covered yet.
runTransactionConformance('prisma on postgres', makePrismaFixture);
runOrmCases('prisma on postgres', makePrismaFixture);
