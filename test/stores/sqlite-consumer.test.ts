import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claimRow,
  deadLetterIndexNames,
  deleteEvents,
  deleteById,
  selectClaimable,
  selectSettled,
  settledIndexName,
} from '../../src/stores/sqlite/dead-letter-sql.js';
import { sqliteExecutor } from '../../src/stores/sqlite/executor.js';
import { failure, runConsumerStoreConformance } from '../conformance/consumer-store-suite.js';
import { makeSqliteFixture } from './sqlite-fixture.js';

const PREFIX = 'surety_';

runConsumerStoreConformance('sqlite', async () => {
  const f = await makeSqliteFixture('sqlite_consumer');
  const t = f.store.tables;
  const explain = (statements: [string, unknown[]][]) =>
    statements
      .flatMap(
        ([text, values]) => f.store.db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[],
      )
      .map((r) => r.detail)
      .join('\n');
  return {
    ...f,
    deadLetterClaimIndexes: Object.values(deadLetterIndexNames(PREFIX)),
    async deadLetterClaimPlan() {
      // Statistics of an all-pending table make the partial indexes look useless; INDEXED BY must hold regardless.
      f.store.db.exec('ANALYZE');
      return explain([
        [selectClaimable(t, PREFIX), [10_000, 'g', 500, 10_000, 'g', 500, 500]],
        [claimRow(t), ['x', 20_000, 10_000, 1]],
      ]);
    },
    settledPurgeIndex: settledIndexName(PREFIX),
    async settledPurgePlan() {
      f.store.db.exec('ANALYZE');
      return explain([
        [selectSettled(t, PREFIX), [20_000, 500]],
        [deleteById(t), [1]],
        [deleteEvents(t, PREFIX), [1]],
      ]);
    },
  };
});

describe('sqlite consumer store specifics', () => {
  let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
  beforeEach(async () => {
    f = await makeSqliteFixture('sqlite_consumer_specifics');
  });
  afterEach(async () => {
    await f.teardown();
  });
  const pendingNow = () => ({ status: 'pending' as const, nextRetryAt: 0 });

  it('queues dead-letter operations behind an open application transaction', async () => {
    const t = await f.begin();
    const record = failure();
    await f.store.deadLetters.recordDeliveryFailure(t.tx, record, pendingNow);
    expect(await f.store.inbox.recordInbox(t.tx, record.messageId, record.group, 1)).toBe(true);
    let settled = false;
    const claimed = f.store.deadLetters
      .claimDue({ owner: 'r1', group: record.group, now: 10, limit: 10, leaseMs: 10 })
      .finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false); // waiting for the lock, not running inside the open transaction
    await t.commit();
    expect((await claimed).map((r) => r.messageId)).toEqual([record.messageId]);
  });

  it('rejects, rather than deadlocks, a consumer store call made inside its own transaction', async () => {
    await expect(f.store.transaction(() => f.store.deadLetters.countDeadLetters())).rejects.toMatchObject({
      code: 'SURETY_STORE_FAILED',
    });
    await expect(f.store.transaction(() => f.store.inbox.purgeInbox(1, 1))).rejects.toMatchObject({
      code: 'SURETY_STORE_FAILED',
    });
  });

  it('refuses a raise on a snapshot older than a raise another connection committed', async () => {
    // The consumer's transactions are BEGIN IMMEDIATE; a deferred one that read first is the case to rule out.
    const guard = { group: 'billing', scope: 'customers', key: 'cust-1' };
    const other = new Database(f.path, { timeout: 0 });
    try {
      other.exec('BEGIN');
      expect(other.prepare(`SELECT count(*) AS n FROM ${f.store.tables.versionGuards}`).get()).toEqual({ n: 0 });
      expect(await f.store.transaction((tx) => f.store.versionGuards.raiseVersion(tx, guard, 2))).toBe(true);
      await expect(f.store.versionGuards.raiseVersion(sqliteExecutor(other), guard, 1)).rejects.toMatchObject({
        code: 'SQLITE_BUSY_SNAPSHOT',
      });
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    expect(await f.store.versionGuards.guardedVersion(guard)).toBe(2);
  });
});
