import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { makeKnexFixture } from './knex-fixture.js';
import { runOrmCases } from './orm-cases.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`knex on ${dialect}`, () => makeKnexFixture(dialect));
  runOrmCases(`knex on ${dialect}`, () => makeKnexFixture(dialect));
}
