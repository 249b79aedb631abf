import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimDue, purgeSettled } from '../../src/stores/postgres/dead-letter-sql.js';
import { pgExecutor, statementName } from '../../src/stores/postgres/executor.js';
import { insertInbox } from '../../src/stores/postgres/inbox-sql.js';
import { CLAIM_PLAN_SETTINGS } from '../../src/stores/postgres/outbox-sql.js';
import { runConsumerStoreConformance } from '../conformance/consumer-store-suite.js';
import { blockedOnLock } from '../support/lock-waits.js';
import { makePostgresFixture } from './fixtures.js';

runConsumerStoreConformance('postgres', async () => {
  const f = await makePostgresFixture('pg_consumer');
  /** The plan of `text` under the settings the store runs it with (CLAIM_PLAN_SETTINGS). */
  const forcedPlan = async (text: string, values: unknown[]) => {
    const client = await f.pool.connect();
    try {
      // Statistics that say "empty table" tempt the planner into a sequential scan.
      await client.query(`ALTER TABLE ${f.store.tables.deadLetters} SET (autovacuum_enabled = false)`);
      await client.query(`BEGIN; ${CLAIM_PLAN_SETTINGS}`);
      const res = await client.query(`EXPLAIN ${text}`, values);
      await client.query('ROLLBACK');
      return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    } finally {
      client.release();
    }
  };
  return {
    ...f,
    deadLetterClaimIndexes: ['surety_dead_letters_due', 'surety_dead_letters_lease'],
    deadLetterClaimPlan: () => forcedPlan(claimDue(f.store.tables), [10_000, 500, 'x', 20_000, 'g']),
    settledPurgeIndex: 'surety_dead_letters_settled',
    settledPurgePlan: () => forcedPlan(purgeSettled(f.store.tables), [20_000, 500]),
  };
});

describe('postgres consumer store specifics', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  beforeEach(async () => {
    f = await makePostgresFixture('pg_consumer_specifics');
  });
  afterEach(async () => {
    await f.teardown();
  });

  it('records the inbox through a statement prepared once per connection', async () => {
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      expect(await f.store.inbox.recordInbox(pgExecutor(client), randomUUID(), 'g', 1)).toBe(true);
      await client.query('COMMIT');
      const { rows } = await client.query('SELECT name FROM pg_prepared_statements');
      expect(rows.map((r: { name: string }) => r.name)).toContain(statementName(insertInbox(f.store.tables)));
    } finally {
      client.release();
    }
  });

  it('fails, never passes, a raise in REPEATABLE READ behind a concurrent first raise', async () => {
    const guard = { group: 'billing', scope: 'customers', key: 'cust-1' };
    const first = await f.pool.connect();
    const second = await f.pool.connect();
    try {
      await first.query('BEGIN');
      expect(await f.store.versionGuards.raiseVersion(pgExecutor(first), guard, 2)).toBe(true);
      // The snapshot is taken before the first commits, so the committed guard is not in it.
      await second.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const { rows } = await second.query('SELECT pg_backend_pid() AS pid');
      const pending = f.store.versionGuards.raiseVersion(pgExecutor(second), guard, 1).then(
        () => 'passed',
        (err: { code?: string }) => err.code,
      );
      await blockedOnLock(f.store, Number(rows[0].pid));
      await first.query('COMMIT');
      expect(await pending).toBe('40001'); // could not serialize access due to concurrent update
      await second.query('ROLLBACK');
    } finally {
      first.release();
      second.release();
    }
    expect(await f.store.versionGuards.guardedVersion(guard)).toBe(2);
  });
});
