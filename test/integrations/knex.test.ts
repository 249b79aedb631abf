import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { knexExecutor } from '../../src/integrations/knex/index.js';
import { Outbox } from '../../src/producer/outbox.js';
import { runTransactionConformance } from '../conformance/transaction-cases.js';
import { makeKnexFixture } from './knex-fixture.js';
import { runOrmCases } from './orm-cases.js';

for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
  runTransactionConformance(`knex on ${dialect}`, () => makeKnexFixture(dialect));
  runOrmCases(`knex on ${dialect}`, () => makeKnexFixture(dialect));
}

describe('knex nested transactions', () => {
  it('announces at the outermost commit, not at the savepoint release, and never after a rollback', async () => {
    const f = await makeKnexFixture('postgres');
    try {
      const outbox = new Outbox({ store: f.store });
      let heard = 0;
      outbox.onCommitted(() => heard++);
      const nestedAdd = async (trx: Knex.Transaction) => {
        const ids: string[] = [];
        await trx.transaction(async (inner) => {
          const key = randomUUID();
          ids.push(
            (await outbox.add(knexExecutor(inner, outbox), { type: 'order.created', key, payload: {} })).messageId,
          );
        });
        expect(heard).toBe(0); // the savepoint is released; the transaction is still open
        return ids[0]!;
      };
      let lost = '';
      await expect(
        f.transaction(outbox, async (_tx, trx) => {
          lost = await nestedAdd(trx as Knex.Transaction);
          throw new Error('outer rolled back');
        }),
      ).rejects.toThrow('outer rolled back');
      expect(heard).toBe(0);
      expect(await f.store.outbox.get(lost)).toBeUndefined();
      const kept = await f.transaction(outbox, (_tx, trx) => nestedAdd(trx as Knex.Transaction));
      expect(heard).toBe(1);
      expect(await f.store.outbox.get(kept)).toBeDefined();
    } finally {
      await f.teardown();
    }
  });
});
