import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { makeKyselyFixture } from './kysely-fixture.js';
import { runOrmCases } from './orm-cases.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`kysely on ${dialect}`, () => makeKyselyFixture(dialect));
  runOrmCases(`kysely on ${dialect}`, () => makeKyselyFixture(dialect));
}
