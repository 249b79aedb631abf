import {
  deadLetterIndexNames,
  deleteEvents,
  deleteByIds,
  selectDue,
  selectExpiredLeases,
  selectSettled,
  settledIndexName,
} from '../../src/stores/mysql/dead-letter-sql.js';
import { runConsumerStoreConformance } from '../conformance/consumer-store-suite.js';
import { makeMysqlFixture } from './mysql-fixture.js';

runConsumerStoreConformance('mysql', async () => {
  const f = await makeMysqlFixture('mysql_consumer');
  const t = f.store.tables;
  /** EXPLAIN of each statement, one line per table it reads. */
  const explain = async (statements: [string, unknown[]][]) => {
    const lines: string[] = [];
    for (const [text, values] of statements) {
      const [rows] = await f.pool.query(`EXPLAIN ${text}`, values);
      for (const r of rows as Record<string, unknown>[]) {
        lines.push(
          `table: ${String(r.table)}, type: ${String(r.type)}, key: ${String(r.key)}, extra: ${String(r.Extra)}`,
        );
      }
    }
    return lines.join('\n');
  };
  return {
    ...f,
    deadLetterClaimIndexes: Object.values(deadLetterIndexNames(f.prefix)),
    async deadLetterClaimPlan() {
      // Fresh statistics show one status matching every row: left alone, the optimizer would scan.
      await f.pool.query(`ANALYZE TABLE ${t.deadLetters}`);
      return explain([
        [selectExpiredLeases(t, f.prefix), [10_000, 'g', 500]],
        [selectDue(t, f.prefix), [10_000, 'g', 500]],
      ]);
    },
    settledPurgeIndex: settledIndexName(f.prefix),
    async settledPurgePlan() {
      await f.pool.query(`ANALYZE TABLE ${t.deadLetters}, ${t.deadLetterEvents}`);
      return explain([
        [selectSettled(t, f.prefix), [20_000, 500]],
        [deleteByIds(t, 3), [1, 2, 3]],
        [deleteEvents(t, 3), [1, 2, 3]],
      ]);
    },
  };
});
