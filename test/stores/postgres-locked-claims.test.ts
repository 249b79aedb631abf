import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LockedBatch, NewOutboxRow } from '../../src/ports/outbox-store.js';
import { CLAIM_PLAN_SETTINGS, lockDueOutbox } from '../../src/stores/postgres/outbox-sql.js';
import { newRow } from '../support/rows.js';
import { waitFor } from '../support/wait.js';
import { makePostgresFixture } from './fixtures.js';

/** PostgreSQL's locked claims: due rows held as row locks of an open transaction (locked-batch.ts). */
describe('PostgreSQL locked claims', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let open: LockedBatch[];

  beforeEach(async () => {
    f = await makePostgresFixture('locked');
    open = [];
  });
  afterEach(async () => {
    for (const b of open) await b.release();
    await f.teardown();
  });

  const add = async (row: NewOutboxRow, ordered = false) => {
    await f.store.transaction((tx) => f.store.outbox.insert(tx, row, { ordered }));
    return row;
  };
  const lock = async (now = 10_000, limit = 100, ordered = false, leaseMs = 60_000) => {
    const batch = await f.store.outbox.claimLocked({ now, limit, ordered, leaseMs });
    open.push(batch);
    return batch;
  };
  const ids = (b: LockedBatch) => b.rows.map((r) => r.messageId);
  /** The server process holding the open claim transaction of this test's schema. */
  const holderPid = async () => {
    const { rows } = await f.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE $1`,
      [`%"${f.schema}".%`],
    );
    expect(rows).toHaveLength(1);
    return rows[0]!.pid;
  };

  it('claims due rows in order without writing them, and hides them from every other claim until released', async () => {
    const a = await add(newRow());
    const b = await add(newRow());
    const batch = await lock();
    expect(ids(batch)).toEqual([a.messageId, b.messageId]);
    // Nothing was written: the rows look untouched to everyone else.
    expect(await f.store.outbox.get(a.messageId)).toMatchObject({ status: 'pending', claimedBy: null, attempts: 0 });
    expect((await lock()).rows).toEqual([]);
    expect(
      await f.store.outbox.claim({ owner: 'lease', limit: 100, now: 10_000, leaseMs: 1_000, ordered: false }),
    ).toEqual([]);
    await batch.release();
    expect(ids(await lock())).toEqual([a.messageId, b.messageId]);
  });

  it('settles in one commit: sent rows marked, failures recorded with their history, the rest left as they were', async () => {
    const [sent, failed, dead, untouched] = [
      await add(newRow()),
      await add(newRow()),
      await add(newRow()),
      await add(newRow()),
    ];
    const batch = await lock();
    const seq = (id: string) => batch.rows.find((r) => r.messageId === id)!.seq;
    await batch.settle(
      [seq(sent.messageId)],
      [
        { seq: seq(failed.messageId), owner: 'r1', attempts: 1, nextAttemptAt: 70_000, dead: false, error: 'nacked' },
        { seq: seq(dead.messageId), owner: 'r1', attempts: 1, nextAttemptAt: 20_000, dead: true, error: 'unroutable' },
      ],
      20_000,
    );
    expect(await f.store.outbox.get(sent.messageId)).toMatchObject({ status: 'sent', sentAt: 20_000 });
    expect(await f.store.outbox.get(failed.messageId)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: 70_000,
      lastError: 'nacked',
    });
    expect(await f.store.outbox.get(dead.messageId)).toMatchObject({
      status: 'dead',
      attempts: 1,
      lastError: 'unroutable',
    });
    expect(await f.store.outbox.get(untouched.messageId)).toMatchObject({ status: 'pending', attempts: 0 });
    const history = await f.pool.query(`SELECT message_id, outcome, actor FROM ${f.store.tables.outboxAttempts}`);
    expect(history.rows).toEqual(
      expect.arrayContaining([
        { message_id: failed.messageId, outcome: 'failed', actor: 'r1' },
        { message_id: dead.messageId, outcome: 'dead', actor: 'r1' },
      ]),
    );
    // The untouched row was let go with the commit; the failed one waits for its next attempt.
    expect(ids(await lock(30_000))).toEqual([untouched.messageId]);
  });

  it('settles an uncharged failure as a reschedule only, and not once another relay charged the row meanwhile', async () => {
    const [lost, taken] = [await add(newRow()), await add(newRow())];
    const batch = await lock();
    const seq = (id: string) => batch.rows.find((r) => r.messageId === id)!.seq;
    // The batch's connection dies; another relay claims both rows and charges `taken` an attempt.
    await f.pool.query('SELECT pg_terminate_backend($1)', [await holderPid()]);
    let other: LockedBatch | undefined;
    await waitFor('the rows to be claimable again', async () => {
      other = await lock();
      if (other.rows.length === 2) return true;
      await other.release();
      return false;
    });
    const nacked = { owner: 'r2', attempts: 1, nextAttemptAt: 50_000, dead: false, error: 'nacked' };
    await other!.settle([], [{ ...nacked, seq: seq(taken.messageId) }], 20_000);
    // The first batch settles late, in a fresh transaction: its uncharged failures start from attempts 0.
    const uncharged = { owner: 'r1', attempts: 0, nextAttemptAt: 40_000, dead: false, charged: false };
    const error = 'SURETY_CONNECTION_LOST: gone';
    const recorded = await batch.settle(
      [],
      [lost, taken].map((r) => ({ ...uncharged, error, seq: seq(r.messageId) })),
      30_000,
    );
    expect(recorded).toEqual([seq(lost.messageId)]);
    expect(await f.store.outbox.get(lost.messageId)).toMatchObject({
      status: 'pending',
      attempts: 0,
      nextAttemptAt: 40_000,
      lastError: error,
    });
    expect(await f.store.outbox.get(taken.messageId)).toMatchObject({
      attempts: 1,
      nextAttemptAt: 50_000,
      lastError: 'nacked',
    });
    const history = await f.pool.query(`SELECT message_id FROM ${f.store.tables.outboxAttempts}`);
    expect(history.rows).toEqual([{ message_id: taken.messageId }]);
  });

  it('frees the rows at once when the claiming connection dies; a late settle still marks them, in a fresh transaction', async () => {
    const a = await add(newRow());
    const b = await add(newRow());
    const batch = await lock();
    await f.pool.query('SELECT pg_terminate_backend($1)', [await holderPid()]);
    await waitFor('the rows to be claimable again', async () => {
      const again = await lock();
      const got = ids(again);
      await again.release();
      return got.includes(a.messageId);
    });
    const [ra, rb] = batch.rows;
    await batch.settle(
      [ra!.seq],
      [{ seq: rb!.seq, owner: 'r1', attempts: 1, nextAttemptAt: 90_000, dead: false, error: 'timeout' }],
      20_000,
    );
    await batch.release(); // safe after settle
    expect(await f.store.outbox.get(a.messageId)).toMatchObject({ status: 'sent', sentAt: 20_000 });
    expect(await f.store.outbox.get(b.messageId)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: 90_000,
    });
  });

  it('after losing its lock, leaves a row another relay has changed meanwhile as that relay left it', async () => {
    const a = await add(newRow());
    const late = await lock();
    await f.pool.query('SELECT pg_terminate_backend($1)', [await holderPid()]);
    // Another relay takes the row and records a failed attempt of its own.
    let other: LockedBatch | undefined;
    await waitFor('another relay to take the row', async () => {
      const b = await lock();
      if (b.rows.length > 0) other = b;
      else await b.release();
      return b.rows.length > 0;
    });
    const row = other!.rows[0]!;
    expect(
      await other!.settle(
        [],
        [{ seq: row.seq, owner: 'r2', attempts: 1, nextAttemptAt: 50_000, dead: false, error: 'r2 saw a nack' }],
        15_000,
      ),
    ).toEqual([row.seq]);
    // The first relay's late outcome for the same attempt is not applied, and it is told so.
    const recorded = await late.settle(
      [],
      [{ seq: row.seq, owner: 'r1', attempts: 1, nextAttemptAt: 90_000, dead: true, error: 'r1 timed out' }],
      20_000,
    );
    expect(recorded).toEqual([]);
    expect(await f.store.outbox.get(a.messageId)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: 50_000,
      lastError: 'r2 saw a nack',
    });
  });

  it('survives its connection dying in the middle of a settle statement, and settles in a fresh transaction', async () => {
    const a = await add(newRow());
    const blocker = await add(newRow());
    // Another transaction holds `blocker`, so the batch gets only `a`, and a settle naming both waits on that lock.
    const other = await f.begin();
    // The queue row is what a claim locks.
    await other.tx.query(
      `SELECT seq FROM ${f.store.tables.outboxPending} WHERE seq = (SELECT seq FROM ${f.store.outbox.outboxTable} WHERE message_id = $1) FOR UPDATE`,
      [blocker.messageId],
    );
    const batch = await lock();
    expect(ids(batch)).toEqual([a.messageId]);
    const blockerSeq = (await f.store.outbox.get(blocker.messageId))!.seq;
    const settling = batch.settle([batch.rows[0]!.seq, blockerSeq], [], 20_000);
    let pid = 0;
    await waitFor('the settle to wait on the lock', async () => {
      const { rows } = await f.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`%"${f.schema}".%`],
      );
      pid = rows[0]?.pid ?? 0;
      return pid !== 0;
    });
    // pg emits `error` on the checked-out client while its statement runs: it must be heard, not crash the process.
    await f.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await other.rollback();
    await settling;
    expect(await f.store.outbox.get(a.messageId)).toMatchObject({ status: 'sent', sentAt: 20_000 });
  });

  it('lets the server end a claim left idle longer than the lease (a hung relay)', async () => {
    const a = await add(newRow());
    const hung = await lock(10_000, 100, false, 300);
    expect(ids(hung)).toEqual([a.messageId]);
    await waitFor('the hung claim to be ended by the server', async () => {
      const again = await lock();
      const got = ids(again);
      await again.release();
      return got.includes(a.messageId);
    });
    // Its late outcome is not lost: the confirmed row is marked in a fresh transaction.
    await hung.settle([hung.rows[0]!.seq], [], 20_000);
    expect(await f.store.outbox.get(a.messageId)).toMatchObject({ status: 'sent', sentAt: 20_000 });
  });

  it('in ordered mode holds a key back while its head is locked in another batch', async () => {
    const [k1a, k1b] = [await add(newRow({ orderingKey: 'k1' }), true), await add(newRow({ orderingKey: 'k1' }), true)];
    const other = await add(newRow({ orderingKey: 'k2' }), true);
    const first = await lock(10_000, 100, true);
    expect(ids(first).sort()).toEqual([k1a.messageId, other.messageId].sort());
    expect((await lock(10_000, 100, true)).rows).toEqual([]); // k1b waits for k1a
    await first.settle(
      first.rows.map((r) => r.seq),
      [],
      11_000,
    );
    expect(ids(await lock(11_000, 100, true))).toEqual([k1b.messageId]);
  });

  it('runs the locked claim on the due index whatever the statistics say', async () => {
    for (let i = 0; i < 300; i++) await add(newRow());
    const client = await f.pool.connect();
    try {
      await client.query(`ALTER TABLE ${f.store.outbox.outboxTable} SET (autovacuum_enabled = false)`);
      for (const ordered of [false, true]) {
        await client.query(`BEGIN; ${CLAIM_PLAN_SETTINGS}`);
        const { rows } = await client.query(`EXPLAIN ${lockDueOutbox(f.store.tables, ordered)}`, [10_000, 500]);
        await client.query('ROLLBACK');
        const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
        expect(plan).toMatch(/Index Scan using surety_outbox_pending_due/);
        expect(plan).not.toMatch(/Seq Scan/);
      }
    } finally {
      client.release();
    }
  });
});
