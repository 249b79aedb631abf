import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, sqliteExecutor } from '../../src/stores/sqlite/index.js';
import { runOutboxStoreConformance, type StoreFixture } from '../conformance/outbox-store-suite.js';
import { uniqueName } from '../support/env.js';
import { newRow } from '../support/rows.js';
import { makeSqliteFixture } from './sqlite-fixture.js';

runOutboxStoreConformance('sqlite', () => makeSqliteFixture());

describe('sqlite store specifics', () => {
  let f: StoreFixture & { path: string };
  beforeEach(async () => {
    f = await makeSqliteFixture('sqlite_specifics');
  });
  afterEach(async () => {
    await f.teardown();
  });
  const claim = (owner = 'r1') =>
    f.store.outbox.claim({ owner, limit: 100, now: 10_000, leaseMs: 10_000, ordered: false });

  it('keeps relay statements out of an application transaction held open across awaits', async () => {
    const t = await f.begin();
    const row = newRow();
    await f.store.outbox.insert(t.tx, row, { ordered: false });
    let settled = false;
    const claimed = claim().finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false); // queued behind the open transaction, not run inside it
    await t.rollback();
    expect(await claimed).toEqual([]);
    expect(await f.store.outbox.get(row.messageId)).toBeUndefined();
  });

  it('rejects, rather than deadlocks, a store call made inside its own transaction', async () => {
    await expect(f.store.transaction(() => f.store.outbox.stats())).rejects.toMatchObject({
      code: 'SURETY_STORE_FAILED',
    });
    await expect(f.store.transaction(() => f.store.transaction(async () => 1))).rejects.toThrow('deadlock');
    expect((await f.store.outbox.stats()).pending).toBe(0);
  });

  it('refuses to run inside a transaction opened on the Database behind its back', async () => {
    const db = (f.store as unknown as { db: Database.Database }).db;
    db.exec('BEGIN');
    await expect(f.store.outbox.stats()).rejects.toMatchObject({ code: 'SURETY_STORE_FAILED' });
    db.exec('ROLLBACK');
    expect((await f.store.outbox.stats()).pending).toBe(0);
  });

  it('shares the file with a second connection, as a relay in another process would', async () => {
    const other = await createSqliteStore({ path: f.path });
    try {
      const row = newRow();
      await f.store.transaction((tx) => f.store.outbox.insert(tx, row, { ordered: false }));
      const t = await f.begin();
      await f.store.outbox.insert(t.tx, newRow(), { ordered: false });
      // WAL: a reader on another connection sees the last commit while a write transaction is open.
      expect((await other.outbox.stats()).pending).toBe(1);
      await t.commit();
      const claimed = await other.outbox.claim({
        owner: 'far',
        limit: 10,
        now: 10_000,
        leaseMs: 10_000,
        ordered: false,
      });
      expect(claimed.map((r) => r.claimedBy)).toEqual(['far', 'far']);
      expect(await claim('near')).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('never reuses a seq after the newest rows were purged', async () => {
    for (let i = 0; i < 3; i++)
      await f.store.transaction((tx) => f.store.outbox.insert(tx, newRow(), { ordered: false }));
    const first = await claim();
    await f.store.outbox.markSent(
      first.map((r) => r.seq),
      1,
    );
    expect(await f.store.outbox.purgeSent(2, 10)).toBe(3);
    await f.store.transaction((tx) => f.store.outbox.insert(tx, newRow(), { ordered: false }));
    const [next] = await claim();
    expect(next!.seq).toBeGreaterThan(Math.max(...first.map((r) => r.seq)));
  });
});

describe('sqlite store on an application Database', () => {
  it('uses the given Database, leaves it open on close, and shares its transactions', async () => {
    const path = join(tmpdir(), `${uniqueName('sqlite_app_db')}.sqlite`);
    const db = new Database(path);
    try {
      const store = await createSqliteStore({ database: db, tablePrefix: 'app_' });
      await store.migrate();
      db.exec('CREATE TABLE orders (id TEXT PRIMARY KEY)');
      const row = newRow();
      await store.transaction(async (tx) => {
        await tx.query('INSERT INTO orders (id) VALUES (?)', ['o-1']);
        await store.outbox.insert(tx, row, { ordered: false });
      });
      await store.close();
      expect(db.open).toBe(true);
      expect((await sqliteExecutor(db).query('SELECT count(*) AS n FROM app_outbox')).rows).toEqual([{ n: 1 }]);
    } finally {
      db.close();
      await Promise.all(['', '-wal', '-shm'].map((s) => rm(`${path}${s}`, { force: true })));
    }
  });

  it('names the offending option', async () => {
    await expect(createSqliteStore({})).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
    await expect(createSqliteStore({ path: ':memory:', tablePrefix: 'bad-prefix' })).rejects.toThrow(
      'sqlite.tablePrefix',
    );
    await expect(createSqliteStore({ path: ':memory:', busyTimeoutMs: -1 })).rejects.toThrow('sqlite.busyTimeoutMs');
  });
});
