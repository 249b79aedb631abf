/**
 * What MikroORM's unit of work adds: a handler's entities are written by the ORM's flush, not by
 * their statements, so they must still commit with the inbox record, be undone with a failing
 * handler's savepoint, and a flush PostgreSQL refuses must not pass for a database outage.
 */
import { randomUUID } from 'node:crypto';
import { EntitySchema, type EntityManager } from '@mikro-orm/core';
import { MikroORM as SqliteOrm } from '@mikro-orm/better-sqlite';
import { MikroORM as MysqlOrm } from '@mikro-orm/mysql';
import { MikroORM as PostgresOrm } from '@mikro-orm/postgresql';
import { afterEach, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import { PermanentError } from '../../src/consumer/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { mikroOrmStore, mikroOrmTransactionOf } from '../../src/integrations/mikro-orm/index.js';
import type { Store } from '../../src/ports/store.js';
import { transportFactories, wire, type TransportHandle } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { dialectFixture, type Dialect } from './orm-fixture.js';

interface Invoice {
  orderId: string;
}

type Raw = EntityManager & { execute(sql: string): Promise<unknown> };

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  describe(`mikro-orm unit of work on ${dialect}`, () => {
    const cleanup: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
    });

    /** The dialect store, a MikroORM with an Invoice entity on a table of its own, and the embedded log. */
    const setup = async (d: Dialect) => {
      const { inner, at } = await dialectFixture(d, `mikro_uow_${d}`);
      cleanup.push(() => inner.teardown());
      const table = uniqueName('mikro_invoices');
      const Invoice = new EntitySchema<Invoice>({
        name: 'Invoice',
        tableName: table,
        properties: { orderId: { type: 'string', primary: true, length: 64 } },
      });
      const options = { entities: [Invoice], allowGlobalContext: false };
      const orm = await (d === 'postgres'
        ? PostgresOrm.init({ ...options, clientUrl: at.url })
        : d === 'mysql'
          ? MysqlOrm.init({ ...options, clientUrl: at.url })
          : SqliteOrm.init({ ...options, dbName: at.path }));
      cleanup.push(() => orm.close(true));
      const em = () => orm.em.fork() as Raw;
      await em().execute(`CREATE TABLE ${table} (order_id VARCHAR(64) PRIMARY KEY)`);
      cleanup.push(() => em().execute(`DROP TABLE ${table}`));
      const t: TransportHandle = await transportFactories.embedded();
      cleanup.push(() => t.close());
      const group = uniqueName('grp');
      const consumer = new Consumer({
        group,
        store: mikroOrmStore(inner.store, orm),
        transport: t.transport,
        logger: silentLogger,
        batchWindowMs: 50,
        parallelism: 1, // one lane: what is published before the start shares a batch
      });
      cleanup.push(() => consumer.stop());
      const invoices = async () => (await em().find(Invoice, {})).map((r) => r.orderId);
      return { store: inner.store as Store, t, group, consumer, Invoice, invoices };
    };

    it("flushes a handler's entities with its inbox record, and discards a failing handler's with its savepoint", async () => {
      const { store, t, group, consumer, Invoice, invoices } = await setup(dialect);
      // The first failure sends the batch again under a savepoint per message, where the last one fails too.
      const orders = [
        { id: randomUUID(), fail: true },
        { id: randomUUID(), fail: false },
        { id: randomUUID(), fail: true },
      ];
      const messages = orders.map((payload) => wire({ type: 'order.created', payload }));
      for (const m of messages) await t.publishRaw('order.created', m);
      let runs = 0;
      consumer.on('order.created', async (order: { id: string; fail: boolean }, { tx }) => {
        runs++;
        mikroOrmTransactionOf(tx).create(Invoice, { orderId: order.id }); // left to the ORM to flush
        if (order.fail) throw new PermanentError('refused after writing');
      });
      await consumer.start();
      await waitFor('all three settled', async () => {
        const done = await store.inbox.inboxRecordedAt(messages[1]!.id, group);
        const dead = await Promise.all(
          [messages[0]!, messages[2]!].map((m) => store.deadLetters.getDeadLetter(m.id, group)),
        );
        return done !== undefined && dead.every((d) => d !== undefined);
      });
      // The first failed the batch's optimistic pass; the other two then ran under savepoints.
      expect(runs).toBe(3);
      expect(await invoices()).toEqual([orders[1]!.id]);
    });

    it('records a handler whose pending entities PostgreSQL refuses to flush as failed, not the database as down', async () => {
      if (dialect !== 'postgres') return; // only PostgreSQL aborts the transaction on a caught failed statement
      const { store, t, group, consumer, Invoice, invoices } = await setup(dialect);
      const message = wire({ type: 'order.created', payload: { id: randomUUID() } });
      await t.publishRaw('order.created', message);
      let runs = 0;
      consumer.on('order.created', async (order: { id: string }, { tx }) => {
        runs++;
        const em = mikroOrmTransactionOf<Raw>(tx);
        em.create(Invoice, { orderId: order.id });
        await em.execute('SELECT * FROM surety_no_such_table').catch(() => undefined); // caught: aborted
      });
      await consumer.start();
      await waitFor(
        'the failure recorded',
        async () => (await store.deadLetters.getDeadLetter(message.id, group)) !== undefined,
      );
      expect(runs).toBe(2); // the batch, then the message alone under its savepoint
      expect(await store.inbox.inboxRecordedAt(message.id, group)).toBeUndefined();
      expect(await invoices()).toEqual([]);
    });
  });
}
