/**
 * Each dialect's errors.ts turns real driver errors into stable codes: deadlocks and serialization
 * failures are SURETY_STORE_CONFLICT, lock timeouts and busy databases SURETY_STORE_BUSY, and
 * PostgreSQL's 25P02 a TransactionAbortedError. The conflicts are caused for real on the databases.
 */
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError, TransactionAbortedError } from '../../src/core/errors.js';
import { storeError as mysqlStoreError } from '../../src/stores/mysql/errors.js';
import { storeError as postgresStoreError } from '../../src/stores/postgres/errors.js';
import { pgExecutor } from '../../src/stores/postgres/executor.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { testEnv, uniqueName } from '../support/env.js';

/** The rejection of `p`, failing the test if it resolves. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** A connection with an open transaction (a pg client, a mysql2 connection). */
interface Session {
  query(sql: string): Promise<unknown>;
}

/** Two transactions that each wait for the row the other updated: the database ends one. Its error. */
async function deadlockVictim(a: Session, b: Session, table: string): Promise<unknown> {
  await a.query('BEGIN');
  await b.query('BEGIN');
  await a.query(`UPDATE ${table} SET v = 1 WHERE id = 1`);
  await b.query(`UPDATE ${table} SET v = 1 WHERE id = 2`);
  const outcomes = await Promise.allSettled([
    a.query(`UPDATE ${table} SET v = 2 WHERE id = 2`),
    b.query(`UPDATE ${table} SET v = 2 WHERE id = 1`),
  ]);
  return (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason;
}

describe('PostgreSQL driver errors', () => {
  const pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 4 });
  const schema = uniqueName('pg_errors');
  const table = `"${schema}".t`;
  beforeAll(async () => {
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v INT NOT NULL)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  });
  const reset = () => pool.query(`DELETE FROM ${table}; INSERT INTO ${table} VALUES (1, 0), (2, 0)`);

  it('makes a deadlock victim a SURETY_STORE_CONFLICT', async () => {
    await reset();
    const [a, b] = [await pool.connect(), await pool.connect()];
    try {
      const err = postgresStoreError(await deadlockVictim(a, b, table));
      expect(err).toBeInstanceOf(StoreError);
      expect(err.code).toBe('SURETY_STORE_CONFLICT');
      expect((err.cause as { code?: string }).code).toBe('40P01');
    } finally {
      await a.query('ROLLBACK');
      await b.query('ROLLBACK');
      a.release();
      b.release();
    }
  });

  it('makes a serialization failure a SURETY_STORE_CONFLICT', async () => {
    await reset();
    const a = await pool.connect();
    try {
      await a.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await a.query(`SELECT v FROM ${table} WHERE id = 1`); // takes the snapshot
      await pool.query(`UPDATE ${table} SET v = 5 WHERE id = 1`); // committed after it
      const err = postgresStoreError(await rejection(a.query(`UPDATE ${table} SET v = 6 WHERE id = 1`)));
      expect(err.code).toBe('SURETY_STORE_CONFLICT');
      expect((err.cause as { code?: string }).code).toBe('40001');
    } finally {
      await a.query('ROLLBACK');
      a.release();
    }
  });

  it('leaves other errors SURETY_STORE_FAILED', async () => {
    await reset();
    const err = postgresStoreError(await rejection(pool.query(`INSERT INTO ${table} VALUES (1, 0)`)));
    expect(err.code).toBe('SURETY_STORE_FAILED');
    expect((err.cause as { code?: string }).code).toBe('23505');
  });

  it('reports a statement of an aborted transaction as a TransactionAbortedError', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const tx = pgExecutor(client);
      const first = await rejection(tx.query('SELECT 1 / 0'));
      expect(first).not.toBeInstanceOf(TransactionAbortedError); // the caller's own error, as the driver gave it
      const next = await rejection(tx.query('SELECT 1'));
      expect(next).toBeInstanceOf(TransactionAbortedError);
      expect((next as TransactionAbortedError).code).toBe('SURETY_TRANSACTION_ABORTED');
      expect(((next as Error).cause as { code?: string }).code).toBe('25P02');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});

describe('MySQL driver errors', () => {
  const pool = mysql.createPool({ uri: testEnv.mysqlUrl, connectionLimit: 4 });
  const table = `\`${uniqueName('my_errors')}\``;
  beforeAll(async () => {
    await pool.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE ${table}`);
    await pool.end();
  });
  const reset = async () => {
    await pool.query(`DELETE FROM ${table}`);
    await pool.query(`INSERT INTO ${table} VALUES (1, 0), (2, 0)`);
  };

  it('makes a deadlock victim a SURETY_STORE_CONFLICT', async () => {
    await reset();
    const [a, b] = [await pool.getConnection(), await pool.getConnection()];
    try {
      const err = mysqlStoreError(await deadlockVictim(a, b, table));
      expect(err.code).toBe('SURETY_STORE_CONFLICT');
      expect((err.cause as { errno?: number }).errno).toBe(1213);
    } finally {
      await a.query('ROLLBACK');
      await b.query('ROLLBACK');
      a.release();
      b.release();
    }
  });

  it('makes a lock wait timeout a SURETY_STORE_BUSY', async () => {
    await reset();
    const [a, b] = [await pool.getConnection(), await pool.getConnection()];
    try {
      await a.query('BEGIN');
      await a.query(`UPDATE ${table} SET v = 1 WHERE id = 1`);
      await b.query('SET SESSION innodb_lock_wait_timeout = 1');
      const err = mysqlStoreError(await rejection(b.query(`UPDATE ${table} SET v = 2 WHERE id = 1`)));
      expect(err.code).toBe('SURETY_STORE_BUSY');
      expect((err.cause as { errno?: number }).errno).toBe(1205);
    } finally {
      await a.query('ROLLBACK');
      a.release();
      b.release();
    }
  });

  it('leaves other errors SURETY_STORE_FAILED', async () => {
    await reset();
    const err = mysqlStoreError(await rejection(pool.query(`INSERT INTO ${table} VALUES (1, 0)`)));
    expect(err.code).toBe('SURETY_STORE_FAILED');
    expect((err.cause as { errno?: number }).errno).toBe(1062);
  });
});

describe('SQLite driver errors', () => {
  it('rejects a store operation on a database another connection holds with SURETY_STORE_BUSY', async () => {
    const path = join(tmpdir(), `${uniqueName('sqlite_busy')}.sqlite`);
    const store = await createSqliteStore({ path, busyTimeoutMs: 0 });
    const other = new Database(path);
    try {
      await store.migrate();
      other.exec('BEGIN IMMEDIATE');
      const err = await rejection(
        store.outbox.claim({ owner: 'r', limit: 10, now: Date.now(), leaseMs: 1_000, ordered: false }),
      );
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('SURETY_STORE_BUSY');
      expect(((err as Error).cause as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
      other.exec('ROLLBACK');
      // Once the lock is free the same operation succeeds: nothing was left half done.
      expect(
        await store.outbox.claim({ owner: 'r', limit: 10, now: Date.now(), leaseMs: 1_000, ordered: false }),
      ).toEqual([]);
    } finally {
      other.close();
      await store.close();
      await rm(path, { force: true });
      await rm(`${path}-wal`, { force: true });
      await rm(`${path}-shm`, { force: true });
    }
  });
});
