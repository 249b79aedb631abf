import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { runOrmCases } from './orm-cases.js';
import { makeTypeormFixture } from './typeorm-fixture.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`typeorm on ${dialect}`, () => makeTypeormFixture(dialect));
  runOrmCases(`typeorm on ${dialect}`, () => makeTypeormFixture(dialect));
}
