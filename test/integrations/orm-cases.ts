/**
 * What every ORM adapter promises, run by each adapter's test on each database it supports: the
 * commit of the ORM's own transaction announces the outbox's rows and a rollback never does; a
 * caught failed statement on PostgreSQL rejects instead of committing nothing; a consumer's handler
 * writes through the ORM transaction its inbox record commits in.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import { PermanentError } from '../../src/consumer/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { Outbox } from '../../src/producer/outbox.js';
import type { TransactionFixture } from '../conformance/transaction-cases.js';
import { transportFactories, wire, type TransportHandle } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { blockedOnLock, sessionId } from '../support/lock-waits.js';
import { newRow } from '../support/rows.js';
import { waitFor } from '../support/wait.js';
import { placeholder, type Dialect } from './orm-fixture.js';
import packageJson from '../../package.json' with { type: 'json' };

export interface OrmFixture extends TransactionFixture {
  readonly dialect: Dialect;
  /** Lets a child process open the dialect store (test/support/store-from-env.ts). */
  readonly childEnv: Readonly<Record<string, string>>;
  /** The adapter's way to run `work` in an ORM transaction whose commit is announced to `outbox`. */
  transaction<T>(outbox: Outbox, work: (tx: SqlExecutor, trx: object) => Promise<T>): Promise<T>;
  /** The ORM transaction behind a handler's `ctx.tx`, through the adapter's accessor. */
  trxOf(tx: SqlExecutor): object;
  /** Runs a statement through the ORM itself (not Surety's executor) on `trx`. */
  run(trx: object, sql: string, values: readonly unknown[]): Promise<void>;
}

export function runOrmCases(name: string, makeFixture: () => Promise<OrmFixture>): void {
  describe(`ORM adapter: ${name}`, () => {
    let f: OrmFixture;
    let table: string;
    const count = async (id: string) => {
      const { rows } = await f.store.transaction((tx) =>
        tx.query(`SELECT count(*) AS n FROM ${table} WHERE id = ${placeholder(f.dialect, 1)}`, [id]),
      );
      return Number(rows[0]!.n);
    };
    const insert = (trx: object, id: string) =>
      f.run(trx, `INSERT INTO ${table} (id) VALUES (${placeholder(f.dialect, 1)})`, [id]);

    beforeEach(async () => {
      f = await makeFixture();
      table = uniqueName('orm_orders');
      await f.store.transaction((tx) => tx.query(`CREATE TABLE ${table} (id VARCHAR(64) PRIMARY KEY)`));
    });
    afterEach(async () => {
      await f?.store.transaction((tx) => tx.query(`DROP TABLE ${table}`)).catch(() => undefined);
      await f?.teardown();
    });

    it('announces the commit of the ORM transaction, and never a rollback', async () => {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      const kept = randomUUID();
      const { messageId } = await f.transaction(outbox, async (tx, trx) => {
        await insert(trx, kept);
        expect(heard).toBe(0); // not before the commit
        return outbox.add(tx, { type: 'order.created', key: kept, payload: { id: kept } });
      });
      expect(heard).toBe(1);
      expect(await f.store.outbox.get(messageId)).toMatchObject({ status: 'pending', key: kept });
      expect(await count(kept)).toBe(1);

      const lost = randomUUID();
      let lostId = '';
      await expect(
        f.transaction(outbox, async (tx, trx) => {
          await insert(trx, lost);
          lostId = (await outbox.add(tx, { type: 'order.created', key: lost, payload: {} })).messageId;
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      expect(heard).toBe(1);
      expect(lostId).not.toBe('');
      expect(await f.store.outbox.get(lostId)).toBeUndefined();
      expect(await count(lost)).toBe(0);
    });

    it('never reports as committed a transaction a caught failed statement aborted (PostgreSQL)', async () => {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      const id = randomUUID();
      let messageId = '';
      const done = f.transaction(outbox, async (tx, trx) => {
        await insert(trx, id);
        messageId = (await outbox.add(tx, { type: 'order.created', key: id, payload: {} })).messageId;
        await f.run(trx, 'SELECT * FROM surety_no_such_table', []).catch(() => undefined); // caught
      });
      if (f.dialect === 'postgres') {
        await expect(done).rejects.toMatchObject({ code: 'SURETY_TRANSACTION_ABORTED' });
        expect(heard).toBe(0);
        expect(await f.store.outbox.get(messageId)).toBeUndefined();
        expect(await count(id)).toBe(0);
      } else {
        await done; // MySQL and SQLite undo only the failed statement: the rest commits
        expect(heard).toBe(1);
        expect(await f.store.outbox.get(messageId)).toBeDefined();
        expect(await count(id)).toBe(1);
      }
    });

    it('refuses statements and the commit after a MySQL deadlock, even a caught one', async () => {
      if (f.dialect !== 'mysql') return; // PostgreSQL aborts (the case above); SQLite has one writer
      const [a, b] = [randomUUID(), randomUUID()];
      for (const id of [a, b])
        await f.store.transaction((tx) => tx.query(`INSERT INTO ${table} (id) VALUES (?)`, [id]));
      const lock = (tx: SqlExecutor, id: string) =>
        tx.query(`UPDATE ${table} SET id = id WHERE id = ?`, [id]).then(
          () => undefined,
          (err: unknown) => err,
        );
      const t1 = await f.begin();
      const t2 = await f.begin();
      try {
        const first = await sessionId('mysql', t1.tx); // before its queue is held by the wait below
        expect(await lock(t1.tx, a)).toBeUndefined();
        expect(await lock(t2.tx, b)).toBeUndefined();
        const waiting = lock(t1.tx, b);
        await blockedOnLock(f.store, first);
        const outcomes = await Promise.all([waiting, lock(t2.tx, a)]);
        const victim = outcomes[0] ? t1 : t2;
        const survivor = outcomes[0] ? t2 : t1;
        expect(outcomes.filter((o) => (o as { errno?: number } | undefined)?.errno === 1213)).toHaveLength(1);
        await expect(f.store.outbox.insert(victim.tx, newRow(), { ordered: false })).rejects.toMatchObject({
          code: 'SURETY_TRANSACTION_ABORTED',
        });
        await expect(victim.commit()).rejects.toMatchObject({ code: 'SURETY_TRANSACTION_ABORTED' });
        await survivor.commit();
      } finally {
        await t1.rollback().catch(() => undefined);
        await t2.rollback().catch(() => undefined);
      }
    });

    it('runs outbox.transaction through the ORM, and its tx reaches the ORM transaction', async () => {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      const id = randomUUID();
      const added = await outbox.transaction(async (tx) => {
        await insert(f.trxOf(tx), id);
        return outbox.add(tx, { type: 'order.created', key: id, payload: {} });
      });
      expect(added.duplicate).toBe(false);
      expect(heard).toBe(1);
      expect(await f.store.outbox.get(added.messageId)).toBeDefined();
      expect(await count(id)).toBe(1);
      // The same (type, key) again: the row that holds it, reported as a duplicate.
      const again = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', key: id, payload: {} }));
      expect(again).toMatchObject({ duplicate: true, messageId: added.messageId });
    });

    it('refuses to name the ORM transaction of an executor that has none, naming the entry point to use', () => {
      const foreign: SqlExecutor = { query: async () => ({ rows: [], rowCount: 0 }) };
      expect(() => f.trxOf(foreign)).toThrow(expect.objectContaining({ code: 'SURETY_INVALID_INPUT' }));
      const message = (() => {
        try {
          f.trxOf(foreign);
        } catch (err) {
          return (err as Error).message;
        }
      })();
      const entryPoint = /\bsurety\/([\w-]+)/.exec(message ?? '')?.[1];
      expect(Object.keys(packageJson.exports)).toContain(`./${entryPoint}`);
    });

    describe('consumer', () => {
      let t: TransportHandle;
      let consumer: Consumer | undefined;
      beforeEach(async () => {
        t = await transportFactories.embedded();
      });
      afterEach(async () => {
        await consumer?.stop();
        await t.close();
      });

      it('gives the handler the ORM transaction: its writes commit with the inbox record, or not at all', async () => {
        const group = uniqueName('grp');
        await t.prepare(group, 'order.created');
        consumer = new Consumer({
          group,
          store: f.store,
          transport: t.transport,
          logger: silentLogger,
          batchWindowMs: 5,
        });
        consumer.on('order.created', async (order: { id: string; fail?: boolean }, { tx }) => {
          await insert(f.trxOf(tx), order.id);
          if (order.fail) throw new PermanentError('refused after writing');
        });
        await consumer.start();
        const [goodId, badId] = [randomUUID(), randomUUID()];
        const good = wire({ type: 'order.created', payload: { id: goodId } });
        const bad = wire({ type: 'order.created', payload: { id: badId, fail: true } });
        await t.publishRaw('order.created', good);
        await t.publishRaw('order.created', bad);
        await t.publishRaw('order.created', good); // a redelivery: no second effect
        await waitFor('both messages settled', async () => {
          const done = await f.store.inbox.inboxRecordedAt(good.id, group);
          const failed = await f.store.deadLetters.getDeadLetter(bad.id, group);
          return done !== undefined && failed !== undefined;
        });
        expect(await count(goodId)).toBe(1);
        expect(await count(badId)).toBe(0); // rolled back with its savepoint
        expect(await f.store.deadLetters.getDeadLetter(bad.id, group)).toMatchObject({ status: 'dead' });
      });
    });
  });
}
