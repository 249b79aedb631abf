import { randomUUID } from 'node:crypto';
import mysql from 'mysql2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { createMysqlStore } from '../../src/stores/mysql/index.js';
import { runOutboxStoreConformance } from '../conformance/outbox-store-suite.js';
import { testEnv } from '../support/env.js';
import { newRow } from '../support/rows.js';
import { waitFor } from '../support/wait.js';
import { makeMysqlFixture } from './mysql-fixture.js';

runOutboxStoreConformance('mysql', () => makeMysqlFixture());

describe('mysql store specifics', () => {
  let f: Awaited<ReturnType<typeof makeMysqlFixture>>;
  beforeEach(async () => {
    f = await makeMysqlFixture('mysql_specifics');
  });
  afterEach(async () => {
    await f.teardown();
  });

  it('reports a duplicate (type, key) and leaves the caller transaction usable', async () => {
    const first = newRow({ key: 'order-1' });
    const t = await f.begin();
    await f.store.outbox.insert(t.tx, first, { ordered: true });
    // ER_DUP_ENTRY rolls back only the failed statement in InnoDB.
    expect(await f.store.outbox.insert(t.tx, newRow({ key: 'order-1' }), { ordered: true })).toEqual({
      inserted: false,
      messageId: first.messageId,
    });
    const other = newRow();
    await f.store.outbox.insert(t.tx, other, { ordered: true });
    await t.commit();
    expect((await f.store.outbox.stats()).pending).toBe(2);
    expect(await f.store.outbox.get(other.messageId)).toBeDefined();
  });

  it('in ordered mode, a head row locked by another transaction still blocks its key', async () => {
    const [head, next] = [newRow({ orderingKey: 'k' }), newRow({ orderingKey: 'k' })];
    for (const r of [head, next]) await f.store.transaction((tx) => f.store.outbox.insert(tx, r, { ordered: true }));
    const t = await f.begin();
    await t.tx.query(`SELECT seq FROM ${f.store.outbox.outboxTable} WHERE message_id = ? FOR UPDATE`, [head.messageId]);
    // SKIP LOCKED skips the head; the NOT EXISTS check must still see it (a plain read), or `next` would jump the queue.
    expect(await f.store.outbox.claim({ owner: 'r1', limit: 10, now: 10_000, leaseMs: 1_000, ordered: true })).toEqual(
      [],
    );
    await t.rollback();
    const claimed = await f.store.outbox.claim({ owner: 'r1', limit: 10, now: 10_000, leaseMs: 1_000, ordered: true });
    expect(claimed.map((r) => r.messageId)).toEqual([head.messageId]);
  });

  // The claim's NOT EXISTS is a plain read of a snapshot taken as the claim starts, and its locking
  // read sees rows committed later: two rows of a key committed in between were both claimed.
  it('in ordered mode, claims only the head of a key whose rows commit while the claim scans', async () => {
    const now = 10_000;
    // Due next after each attempt's opener, and held by another transaction: the claim takes tens of
    // milliseconds to skip them all.
    for (let i = 0; i < 30_000; i += 1_000) {
      const rows = Array.from({ length: 1_000 }, (_, j) => {
        const key = `fill-${i + j}`;
        return [randomUUID(), 'fill', key, 'fill', key, 1, '{}', '{}', 2, 2];
      });
      await f.pool.query(
        `INSERT INTO ${f.store.outbox.outboxTable} (message_id, type, msg_key, topic, ordering_key, version, headers, payload, created_at, next_attempt_at) VALUES ?`,
        [rows],
      );
    }
    const hold = await f.pool.getConnection();
    const open: { rollback(): Promise<void> }[] = [];
    try {
      // READ COMMITTED: no gap locks, which would block the writers' inserts.
      await hold.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await hold.beginTransaction();
      await hold.query(`SELECT seq FROM ${f.store.outbox.outboxTable} WHERE type = 'fill' FOR UPDATE`);
      for (let attempt = 1; ; attempt++) {
        // Due first: the claim's first NOT EXISTS check, on this row, takes its snapshot.
        await f.store.transaction((tx) => f.store.outbox.insert(tx, newRow({ createdAt: 1 }), { ordered: true }));
        const key = `race-${attempt}`;
        const [head, next] = [newRow({ orderingKey: key, createdAt: 3 }), newRow({ orderingKey: key, createdAt: 3 })];
        const writer = await f.begin();
        open.push(writer);
        await f.store.outbox.insert(writer.tx, head, { ordered: true });
        await f.store.outbox.insert(writer.tx, next, { ordered: true });
        const claiming = f.store.outbox.claim({
          owner: `r${attempt}`,
          limit: 100,
          now,
          leaseMs: 60_000,
          ordered: true,
        });
        claiming.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled
        await waitFor(
          'the claim to execute',
          async () => {
            // MariaDB says 'Sending data', MySQL 8 'executing'; the claim's first row is read at once.
            const [rows] = await f.pool.query(
              `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()
                AND INFO LIKE '%SKIP LOCKED%' AND INFO LIKE ? AND STATE IN ('Sending data', 'executing')`,
              [`%${f.prefix}outbox%`],
            );
            return Number((rows as { n: number }[])[0]!.n) > 0;
          },
          10_000,
          1,
        );
        await writer.commit();
        open.pop();
        const claimed = (await claiming).map((r) => r.messageId);
        if (claimed.includes(head.messageId)) {
          expect(claimed).not.toContain(next.messageId);
          break;
        }
        // The claim passed the key's rows before they committed: try again with a new key.
        expect(attempt).toBeLessThan(5);
      }
    } finally {
      for (const t of open) await t.rollback();
      await hold.rollback();
      hold.release();
    }
  });

  // InnoDB rolls the whole transaction back on a deadlock; mysql2 would still send the statements
  // queued behind the victim, and they would run in autocommit.
  it('runs nothing queued behind a statement that deadlocked, and refuses to commit after one', async () => {
    const table = `${f.prefix}rows`;
    await f.pool.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v INT NOT NULL)`);
    await f.pool.query(`INSERT INTO ${table} (id, v) VALUES (1, 0), (2, 0)`);
    /**
     * Runs `work` in a store transaction that has updated row 2, with a `wait` that updates row 1,
     * which another transaction holds; that one, heavier so that InnoDB picks ours as the victim,
     * then asks for row 2. Returns what the store transaction threw.
     */
    let round = 0;
    const deadlocked = async (work: (tx: SqlExecutor, wait: () => Promise<unknown>) => Promise<unknown>) => {
      // Its own text, so that a view left from the last round cannot pass for this one.
      const waiting = `UPDATE ${table} SET v = v + ${++round} WHERE id = 1`;
      const other = await f.pool.getConnection();
      let ours: Promise<unknown> | undefined;
      try {
        await other.beginTransaction();
        await other.query(`UPDATE ${table} SET v = v + 1 WHERE id = 1`);
        await other.query(`INSERT INTO ${table} (id, v) VALUES ?`, [
          Array.from({ length: 200 }, (_, i) => [100 + i, 0]),
        ]);
        ours = f.store
          .transaction(async (tx) => {
            await tx.query(`UPDATE ${table} SET v = v + 1 WHERE id = 2`);
            return work(tx, () => tx.query(waiting));
          })
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        await waitFor(
          'our transaction to wait for row 1',
          async () => {
            const [rows] = await f.pool.query(
              "SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query = ?",
              [waiting],
            );
            return Number((rows as { n: number }[])[0]!.n) > 0;
          },
          10_000,
          150, // InnoDB refreshes this view only when it was not read in the last 100 ms
        );
        await other.query(`UPDATE ${table} SET v = v + 1 WHERE id = 2`); // the cycle: ours is rolled back
      } finally {
        await other.rollback();
        other.release();
      }
      return ours;
    };
    const row = newRow();
    const queued = await deadlocked((tx, wait) =>
      Promise.all([wait(), f.store.outbox.insert(tx, row, { ordered: false }), tx.query(`DELETE FROM ${table}`)]),
    );
    expect((queued as { errno?: number }).errno).toBe(1213);
    expect(await f.store.outbox.get(row.messageId)).toBeUndefined();
    const [left] = await f.pool.query(`SELECT COUNT(*) AS n FROM ${table}`);
    expect(Number((left as { n: number }[])[0]!.n)).toBe(2);
    // A caller that catches the deadlock and carries on must not be told its work committed.
    const caught = await deadlocked((_tx, wait) => wait().catch(() => 'carried on'));
    expect((caught as { code?: string }).code).toBe('SURETY_TRANSACTION_ABORTED');
  });

  it('rethrows a duplicate message id instead of reporting it as the same event', async () => {
    const row = newRow();
    await f.store.transaction((tx) => f.store.outbox.insert(tx, row, { ordered: false }));
    const clash = { ...newRow(), messageId: row.messageId };
    await expect(
      f.store.transaction((tx) => f.store.outbox.insert(tx, clash, { ordered: false })),
    ).rejects.toMatchObject({
      errno: 1062,
    });
  });

  it('accepts a callback-style mysql2 pool and leaves it open on close', async () => {
    const pool = mysql.createPool({ uri: testEnv.mysqlUrl, connectionLimit: 2 });
    try {
      const store = await createMysqlStore({ pool, tablePrefix: f.prefix });
      expect(await store.outbox.stats()).toMatchObject({ pending: 0 });
      await store.close();
      await pool.promise().query('SELECT 1');
    } finally {
      await pool.promise().end();
    }
  });

  it('names the offending option', async () => {
    await expect(createMysqlStore({})).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
    await expect(createMysqlStore({ uri: testEnv.mysqlUrl, poolSize: 1 })).rejects.toThrow('mysql.poolSize');
    await expect(createMysqlStore({ uri: testEnv.mysqlUrl, tablePrefix: 'x;drop' })).rejects.toThrow(
      'mysql.tablePrefix',
    );
  });
});
