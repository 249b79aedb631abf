import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { drizzleDialects, makeDrizzleFixture, type DrizzleDriver } from './drizzle-fixture.js';
import { runOrmCases } from './orm-cases.js';

for (const driver of Object.keys(drizzleDialects) as DrizzleDriver[]) {
  runTransactionConformance(`drizzle on ${driver}`, () => makeDrizzleFixture(driver));
  runOrmCases(`drizzle on ${driver}`, () => makeDrizzleFixture(driver));
}
