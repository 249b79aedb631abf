import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/core/errors.js';
import { WIRE_HEADERS } from '../../src/core/wire.js';
import { Outbox } from '../../src/producer/outbox.js';
import { wireFromRow } from '../../src/producer/outbox-rows.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { storeFixtures } from '../support/stores.js';

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  describe(`ordered outbox: the ordering key (${dialect})`, () => {
    let f: StoreFixture;
    beforeEach(async () => {
      f = await makeStore(`ordkey_${dialect}`);
    });
    afterEach(async () => f.teardown());

    const pendingRows = async () => (await f.store.outbox.stats()).pending;

    it('refuses an add without orderingKey, saying that key is the deduplication key, and writes nothing', async () => {
      const outbox = new Outbox({ store: f.store, ordered: true });
      // The mix-up: the entity's id given as `key`, meant as its order.
      const add = outbox.transaction((tx) =>
        outbox.add(tx, { type: 'account.credited', key: 'acct-1', payload: { amount: 5 } }),
      );
      const err = await add.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidMessageError);
      expect(err).toMatchObject({ code: 'SURETY_INVALID_MESSAGE', field: 'orderingKey' });
      expect((err as Error).message).toMatch(/^invalid message field "orderingKey": is required by an ordered outbox/);
      expect((err as Error).message).toContain('`key` is the deduplication key, not an ordering key');
      expect((err as Error).message).toContain('a second add with the same type and key is a duplicate');
      expect(await pendingRows()).toBe(0);
    });

    it('stores the ordering key given, and the relay sends it in surety-ordering-key', async () => {
      const outbox = new Outbox({ store: f.store, ordered: true });
      const [first, second] = await outbox.transaction(async (tx) => [
        await outbox.add(tx, { type: 'account.credited', orderingKey: 'acct-1', payload: { amount: 5 } }),
        await outbox.add(tx, { type: 'account.credited', orderingKey: 'acct-1', payload: { amount: 7 } }),
      ]);
      // The default key is the message id: the entity's second event of a type is no duplicate.
      expect([first!.duplicate, second!.duplicate]).toEqual([false, false]);
      for (const added of [first!, second!]) {
        const row = (await f.store.outbox.get(added.messageId))!;
        expect(row.orderingKey).toBe('acct-1');
        expect(row.key).toBe(added.messageId);
        expect(wireFromRow(row).headers[WIRE_HEADERS.orderingKey]).toBe('acct-1');
      }
    });

    it('keeps orderingKey optional without ordering: it defaults to key and travels all the same', async () => {
      const outbox = new Outbox({ store: f.store });
      const added = await outbox.transaction((tx) =>
        outbox.add(tx, { type: 'order.created', key: 'order-1', payload: {} }),
      );
      const row = (await f.store.outbox.get(added.messageId))!;
      expect(row.orderingKey).toBe('order-1');
      expect(wireFromRow(row).headers[WIRE_HEADERS.orderingKey]).toBe('order-1');
    });
  });
}
