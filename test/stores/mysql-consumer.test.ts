import mysql from 'mysql2/promise';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  deadLetterIndexNames,
  deleteEvents,
  deleteByIds,
  selectDue,
  selectExpiredLeases,
  selectSettled,
  settledIndexName,
} from '../../src/stores/mysql/dead-letter-sql.js';
import { mysqlExecutor } from '../../src/stores/mysql/executor.js';
import { createMysqlStore } from '../../src/stores/mysql/index.js';
import { runConsumerStoreConformance } from '../conformance/consumer-store-suite.js';
import { testEnv } from '../support/env.js';
import { blockedOnLock, sessionId } from '../support/lock-waits.js';
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

describe('mysql consumer store specifics', () => {
  let f: Awaited<ReturnType<typeof makeMysqlFixture>>;
  beforeEach(async () => {
    f = await makeMysqlFixture('mysql_guards');
  });
  afterEach(async () => {
    await f.teardown();
  });
  const guard = { group: 'billing', scope: 'customers', key: 'cust-1' };

  it('makes a concurrent first raise wait and compare with what committed in READ COMMITTED too', async () => {
    // The suite runs the session default, REPEATABLE READ.
    const begin = async () => {
      const conn = await f.pool.getConnection();
      await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await conn.query('START TRANSACTION');
      return conn;
    };
    const first = await begin();
    const second = await begin();
    try {
      expect(await f.store.versionGuards.raiseVersion(mysqlExecutor(first), guard, 2)).toBe(true);
      const id = await sessionId('mysql', mysqlExecutor(second));
      const pending = f.store.versionGuards.raiseVersion(mysqlExecutor(second), guard, 1);
      await blockedOnLock(f.store, id);
      await first.query('COMMIT');
      expect(await pending).toBe(false);
      await second.query('COMMIT');
    } finally {
      first.release();
      second.release();
    }
    expect(await f.store.versionGuards.guardedVersion(guard)).toBe(2);
  });

  it('tells raised from untouched on a pool without the FOUND_ROWS flag as with it', async () => {
    const pool = mysql.createPool({ uri: testEnv.mysqlUrl, connectionLimit: 2, flags: ['-FOUND_ROWS'] });
    try {
      const store = await createMysqlStore({ pool, tablePrefix: f.prefix });
      const raise = (version: number) =>
        store.transaction((tx) => store.versionGuards.raiseVersion(tx, guard, version));
      expect([await raise(2), await raise(2), await raise(1), await raise(3)]).toEqual([true, false, false, true]);
      expect(await store.versionGuards.guardedVersion(guard)).toBe(3);
    } finally {
      await pool.end();
    }
  });
});
