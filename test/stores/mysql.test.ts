import mysql from 'mysql2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMysqlOutboxStore } from '../../src/stores/mysql/index.js';
import { runOutboxStoreConformance } from '../conformance/outbox-store-suite.js';
import { testEnv } from '../support/env.js';
import { newRow } from '../support/rows.js';
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
    await f.store.insert(t.tx, first, { ordered: true });
    // ER_DUP_ENTRY rolls back only the failed statement in InnoDB.
    expect(await f.store.insert(t.tx, newRow({ key: 'order-1' }), { ordered: true })).toEqual({
      inserted: false,
      messageId: first.messageId,
    });
    const other = newRow();
    await f.store.insert(t.tx, other, { ordered: true });
    await t.commit();
    expect((await f.store.stats()).pending).toBe(2);
    expect(await f.store.get(other.messageId)).toBeDefined();
  });

  it('in ordered mode, a head row locked by another transaction still blocks its key', async () => {
    const [head, next] = [newRow({ orderingKey: 'k' }), newRow({ orderingKey: 'k' })];
    for (const r of [head, next]) await f.store.transaction((tx) => f.store.insert(tx, r, { ordered: true }));
    const t = await f.begin();
    await t.tx.query(`SELECT seq FROM ${f.store.outboxTable} WHERE message_id = ? FOR UPDATE`, [head.messageId]);
    // SKIP LOCKED skips the head; the NOT EXISTS check must still see it (a plain read), or `next` would jump the queue.
    expect(await f.store.claim({ owner: 'r1', limit: 10, now: 10_000, leaseMs: 1_000, ordered: true })).toEqual([]);
    await t.rollback();
    const claimed = await f.store.claim({ owner: 'r1', limit: 10, now: 10_000, leaseMs: 1_000, ordered: true });
    expect(claimed.map((r) => r.messageId)).toEqual([head.messageId]);
  });

  it('rethrows a duplicate message id instead of reporting it as the same event', async () => {
    const row = newRow();
    await f.store.transaction((tx) => f.store.insert(tx, row, { ordered: false }));
    const clash = { ...newRow(), messageId: row.messageId };
    await expect(f.store.transaction((tx) => f.store.insert(tx, clash, { ordered: false }))).rejects.toMatchObject({
      errno: 1062,
    });
  });

  it('accepts a callback-style mysql2 pool and leaves it open on close', async () => {
    const pool = mysql.createPool({ uri: testEnv.mysqlUrl, connectionLimit: 2 });
    try {
      const store = await createMysqlOutboxStore({ pool, tablePrefix: f.prefix });
      expect(await store.stats()).toMatchObject({ pending: 0 });
      await store.close();
      await pool.promise().query('SELECT 1');
    } finally {
      await pool.promise().end();
    }
  });

  it('names the offending option', async () => {
    await expect(createMysqlOutboxStore({})).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
    await expect(createMysqlOutboxStore({ uri: testEnv.mysqlUrl, poolSize: 1 })).rejects.toThrow('mysql.poolSize');
    await expect(createMysqlOutboxStore({ uri: testEnv.mysqlUrl, tablePrefix: 'x;drop' })).rejects.toThrow(
      'mysql.tablePrefix',
    );
  });
});
