import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { EntityManager } from '@mikro-orm/core';
import { describe, expect, it } from 'vitest';
import { mikroOrmExecutor } from '../../src/integrations/mikro-orm/index.js';
import { Outbox } from '../../src/producer/outbox.js';
import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { testEnv } from '../support/env.js';
import { newRow } from '../support/rows.js';
import { makeMikroOrmFixture, mikroOrm } from './mikro-orm-fixture.js';
import { runOrmCases } from './orm-cases.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`mikro-orm on ${dialect}`, () => makeMikroOrmFixture(dialect));
  runOrmCases(`mikro-orm on ${dialect}`, () => makeMikroOrmFixture(dialect));
}

describe('mikro-orm nested transactions and explicit begin/commit', () => {
  const add = (em: EntityManager, outbox: Outbox) =>
    outbox
      .add(mikroOrmExecutor(em, outbox), { type: 'order.created', key: randomUUID(), payload: {} })
      .then((r) => r.messageId);

  it('announces at the outermost commit, not at the savepoint release, and never after a rollback', async () => {
    const f = await makeMikroOrmFixture('postgres');
    try {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      const nestedAdd = async (em: EntityManager) => {
        const id = await em.transactional((inner) => add(inner, outbox));
        expect(heard).toBe(0); // the savepoint is released; the transaction is still open
        return id;
      };
      let lost = '';
      await expect(
        f.transaction(outbox, async (_tx, trx) => {
          lost = await nestedAdd(trx as EntityManager);
          throw new Error('outer rolled back');
        }),
      ).rejects.toThrow('outer rolled back');
      expect(heard).toBe(0);
      expect(await f.store.outbox.get(lost)).toBeUndefined();
      const kept = await f.transaction(outbox, (_tx, trx) => nestedAdd(trx as EntityManager));
      expect(heard).toBe(1);
      expect(await f.store.outbox.get(kept)).toBeDefined();
    } finally {
      await f.teardown();
    }
  });

  it("announces each commit of an EntityManager's own begin/commit once, and none of its rollbacks", async () => {
    const f = await makeMikroOrmFixture('postgres');
    const orm = await mikroOrm({ dialect: 'postgres', url: testEnv.postgresUrl, path: '' });
    try {
      const em = orm.em.fork();
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      await em.begin();
      const lost = await add(em, outbox);
      await em.rollback();
      expect(heard).toBe(0);
      const kept: string[] = [];
      for (let i = 0; i < 2; i++) {
        await em.begin();
        kept.push(await add(em, outbox));
        await em.commit();
        expect(heard).toBe(i + 1);
      }
      expect(await f.store.outbox.get(lost)).toBeUndefined();
      for (const id of kept) expect(await f.store.outbox.get(id)).toBeDefined();
      // The connection's commit is hooked now; a transaction Surety took no part in commits as MikroORM's
      // own, even one whose caught failed statement PostgreSQL rolls back at COMMIT.
      await orm.em.fork().transactional(async (plain) => {
        await (plain as unknown as { execute(sql: string): Promise<unknown> })
          .execute('SELECT * FROM surety_no_such_table')
          .catch(() => undefined);
      });
      expect(heard).toBe(2);
    } finally {
      await orm.close(true);
      await f.teardown();
    }
  });
});

describe('mikro-orm store transactions on SQLite', () => {
  it('keeps concurrent store transactions apart: the second waits for the one connection', async () => {
    const f = await makeMikroOrmFixture('sqlite');
    try {
      let opened!: () => void;
      const firstOpen = new Promise<void>((resolve) => (opened = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const [kept, lost] = [newRow(), newRow()];
      const first = f.store.transaction(async (tx) => {
        await f.store.outbox.insert(tx, lost, { ordered: false });
        opened();
        await held;
        throw new Error('first rolled back');
      });
      await firstOpen;
      const second = f.store.transaction((tx) => f.store.outbox.insert(tx, kept, { ordered: false }));
      release();
      await expect(first).rejects.toThrow('first rolled back');
      await second;
      expect(await f.store.outbox.get(lost.messageId)).toBeUndefined();
      expect(await f.store.outbox.get(kept.messageId)).toBeDefined();
    } finally {
      await f.teardown();
    }
  });
});

describe('surety/mikro-orm without MikroORM installed', () => {
  it('imports only types of MikroORM: the EntityManager it is given is all it uses at run time', () => {
    const dir = new URL('../../src/integrations/mikro-orm/', import.meta.url);
    for (const file of readdirSync(dir)) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      const runtime = [...source.matchAll(/^import\s+(?!type\b)[^;]*from\s+'(@mikro-orm\/[^']+)'/gm)].map((m) => m[1]);
      expect(runtime, file).toEqual([]);
    }
  });
});
