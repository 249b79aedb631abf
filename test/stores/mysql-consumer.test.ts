import { deadLetterIndexNames, selectDue, selectExpiredLeases } from '../../src/stores/mysql/dead-letter-sql.js';
import { runConsumerStoreConformance } from '../conformance/consumer-store-suite.js';
import { makeMysqlFixture } from './mysql-fixture.js';

runConsumerStoreConformance('mysql', async () => {
  const f = await makeMysqlFixture('mysql_consumer');
  return {
    ...f,
    deadLetterClaimIndexes: Object.values(deadLetterIndexNames(f.prefix)),
    async deadLetterClaimPlan() {
      // Fresh statistics show one status matching every row: left alone, the optimizer would scan.
      await f.pool.query(`ANALYZE TABLE ${f.store.tables.deadLetters}`);
      const lines: string[] = [];
      for (const text of [selectExpiredLeases(f.store.tables, f.prefix), selectDue(f.store.tables, f.prefix)]) {
        const [rows] = await f.pool.query(`EXPLAIN ${text}`, [10_000, 'g', 500]);
        for (const r of rows as Record<string, unknown>[]) {
          lines.push(
            `table: ${String(r.table)}, type: ${String(r.type)}, key: ${String(r.key)}, extra: ${String(r.Extra)}`,
          );
        }
      }
      return lines.join('\n');
    },
  };
});
