import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { typeormExecutor } from '../../src/integrations/typeorm/index.js';
import { Outbox } from '../../src/producer/outbox.js';
import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { testEnv } from '../support/env.js';
import { newRow } from '../support/rows.js';
import { runOrmCases } from './orm-cases.js';
import { makeTypeormFixture, typeormDataSource } from './typeorm-fixture.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`typeorm on ${dialect}`, () => makeTypeormFixture(dialect));
  runOrmCases(`typeorm on ${dialect}`, () => makeTypeormFixture(dialect));
}

describe('typeorm nested transactions and query runners', () => {
  const add = (manager: EntityManager, outbox: Outbox) =>
    outbox
      .add(typeormExecutor(manager, outbox), { type: 'order.created', key: randomUUID(), payload: {} })
      .then((r) => r.messageId);

  it('announces at the outermost commit, not at the savepoint release, and never after a rollback', async () => {
    const f = await makeTypeormFixture('postgres');
    try {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      const nestedAdd = async (manager: EntityManager) => {
        const id = await manager.transaction((inner) => add(inner, outbox));
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

  it("announces each commit of a query runner's own transactions once, and none of its rollbacks", async () => {
    const f = await makeTypeormFixture('postgres');
    const source = await typeormDataSource({ dialect: 'postgres', url: testEnv.postgresUrl, path: '' });
    const runner = source.createQueryRunner();
    try {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      await runner.startTransaction();
      const lost = await add(runner.manager, outbox);
      await runner.rollbackTransaction();
      expect(heard).toBe(0);
      const kept: string[] = [];
      for (let i = 0; i < 2; i++) {
        await runner.startTransaction();
        kept.push(await add(runner.manager, outbox));
        await runner.commitTransaction();
        expect(heard).toBe(i + 1);
      }
      expect(await f.store.outbox.get(lost)).toBeUndefined();
      for (const id of kept) expect(await f.store.outbox.get(id)).toBeDefined();
    } finally {
      await runner.release();
      await source.destroy();
      await f.teardown();
    }
  });

  it('keeps concurrent store transactions on SQLite apart: TypeORM would nest the second in the first', async () => {
    const f = await makeTypeormFixture('sqlite');
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
