import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as adminSql from '../../src/stores/postgres/admin-sql.js';
import { resendOutboxRows } from '../../src/stores/sql/outbox-resend.js';
import { newRow } from '../support/rows.js';
import { waitFor } from '../support/wait.js';
import { makePostgresFixture } from './fixtures.js';

describe('postgres sent-row purge', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  beforeEach(async () => {
    f = await makePostgresFixture('pg_sent_purge');
  });
  afterEach(async () => {
    await f.teardown();
  });

  /** Whether a statement on the outbox waits for a row lock. */
  const purgeWaits = async () => {
    const { rows } = await f.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
      [`%DELETE FROM ${f.store.tables.outbox}%`],
    );
    return rows[0].n > 0;
  };

  it('passes over a sent row an operator is resending, which stays resent', async () => {
    const row = newRow();
    const add = await f.begin();
    await f.store.outbox.insert(add.tx, row, { ordered: false });
    await add.commit();
    const [claimed] = await f.store.outbox.claim({
      owner: 'r1',
      limit: 10,
      now: 10_000,
      leaseMs: 10_000,
      ordered: false,
    });
    await f.store.outbox.markSent([claimed!.seq], 100_000);
    // The operator's resend holds the row (locked, pending again) while retention runs.
    const resend = await f.begin();
    expect(
      await resendOutboxRows(resend.tx, adminSql, f.store.tables, { messageId: row.messageId }, 'op', 200_000),
    ).toBe(1);
    const purging = f.store.outbox.purgeSent(500_000, 10);
    // Either the purge is done, or it waits for the resend's lock (and, once it commits, deletes the row it resent).
    let purged: number | undefined;
    void purging.then((n) => (purged = n));
    await waitFor(
      'the purge to finish or wait for the row lock',
      async () => purged !== undefined || (await purgeWaits()),
    );
    await resend.commit();
    expect(await purging).toBe(0);
    expect(await f.store.outbox.get(row.messageId)).toMatchObject({ status: 'pending', attempts: 0 });
  });
});
