/**
 * What MikroORM's unit of work adds: a handler's entities are flushed by the ORM, not by their
 * statements, so they must still commit with the inbox record and be undone with a failing
 * handler's savepoint, as its raw statements are.
 */
import { randomUUID } from 'node:crypto';
import { EntitySchema } from '@mikro-orm/core';
import { MikroORM as SqliteOrm } from '@mikro-orm/better-sqlite';
import { MikroORM as MysqlOrm } from '@mikro-orm/mysql';
import { MikroORM as PostgresOrm } from '@mikro-orm/postgresql';
import { afterEach, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import { PermanentError } from '../../src/consumer/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { mikroOrmStore, mikroOrmTransactionOf } from '../../src/integrations/mikro-orm/index.js';
import { transportFactories, wire, type TransportHandle } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { dialectFixture, type DatabaseAt } from './orm-fixture.js';

interface Invoice {
  orderId: string;
}

const ormWith = (at: DatabaseAt, entity: EntitySchema<Invoice>) => {
  const options = { entities: [entity], allowGlobalContext: false };
  if (at.dialect === 'postgres') return PostgresOrm.init({ ...options, clientUrl: at.url });
  if (at.dialect === 'mysql') return MysqlOrm.init({ ...options, clientUrl: at.url });
  return SqliteOrm.init({ ...options, dbName: at.path });
};

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  describe(`mikro-orm unit of work on ${dialect}`, () => {
    const cleanup: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
    });

    it("flushes a handler's entities with its inbox record, and discards a failing handler's with its savepoint", async () => {
      const { inner, at } = await dialectFixture(dialect, `mikro_uow_${dialect}`);
      cleanup.push(() => inner.teardown());
      const table = uniqueName('mikro_invoices');
      const Invoice = new EntitySchema<Invoice>({
        name: 'Invoice',
        tableName: table,
        properties: { orderId: { type: 'string', primary: true, length: 64 } },
      });
      const orm = await ormWith(at, Invoice);
      cleanup.push(() => orm.close(true));
      await orm.em.fork().execute(`CREATE TABLE ${table} (order_id VARCHAR(64) PRIMARY KEY)`);
      cleanup.push(() => orm.em.fork().execute(`DROP TABLE ${table}`));
      const t: TransportHandle = await transportFactories.embedded();
      cleanup.push(() => t.close());

      const group = uniqueName('grp');
      // Published before the consumer starts (one lane), so that one batch holds them all: the first
      // failure sends the batch again under a savepoint per message, where the last one fails too.
      const orders = [
        { id: randomUUID(), fail: true },
        { id: randomUUID(), fail: false },
        { id: randomUUID(), fail: true },
      ];
      const messages = orders.map((payload) => wire({ type: 'order.created', payload }));
      for (const m of messages) await t.publishRaw('order.created', m);
      const consumer = new Consumer({
        group,
        store: mikroOrmStore(inner.store, orm),
        transport: t.transport,
        logger: silentLogger,
        batchWindowMs: 50,
        parallelism: 1, // one lane: the three share a batch
      });
      let runs = 0;
      consumer.on('order.created', async (order: { id: string; fail: boolean }, { tx }) => {
        runs++;
        mikroOrmTransactionOf(tx).create(Invoice, { orderId: order.id }); // left to the ORM to flush
        if (order.fail) throw new PermanentError('refused after writing');
      });
      cleanup.push(() => consumer.stop());
      await consumer.start();
      await waitFor('all three settled', async () => {
        const done = await inner.store.inbox.inboxRecordedAt(messages[1]!.id, group);
        const dead = await Promise.all(
          [messages[0]!, messages[2]!].map((m) => inner.store.deadLetters.getDeadLetter(m.id, group)),
        );
        return done !== undefined && dead.every((d) => d !== undefined);
      });
      // The first failed the batch's optimistic pass; the other two then ran under savepoints.
      expect(runs).toBe(3);
      const rows = await orm.em.fork().find(Invoice, {});
      expect(rows.map((r) => r.orderId)).toEqual([orders[1]!.id]);
    });
  });
}
