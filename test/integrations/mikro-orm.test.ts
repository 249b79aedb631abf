import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { makeMikroOrmFixture } from './mikro-orm-fixture.js';
import { runOrmCases } from './orm-cases.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`mikro-orm on ${dialect}`, () => makeMikroOrmFixture(dialect));
  runOrmCases(`mikro-orm on ${dialect}`, () => makeMikroOrmFixture(dialect));
}
