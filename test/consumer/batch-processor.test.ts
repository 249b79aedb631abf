import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { withEffects, wire, type Effects } from '../support/consumer-env.js';
import { storeFixtures } from '../support/stores.js';

/** A consumer with no broker: the tests drive its processor directly. */
const bareConsumer = (store: ConsumerStore) =>
  new Consumer({
    group: 'g',
    store,
    transport: { subscribe: async () => ({ close: async () => undefined }) },
    logger: silentLogger,
  });

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  const withStore = (label: string, test: (store: ConsumerStore, effects: Effects) => Promise<void>) =>
    withEffects(makeStore, label, test);

  describe(`batch processing (${dialect})`, () => {
    it('rolls back only the failing message of a batch and never runs it twice', async () => {
      await withStore(`batch_${dialect}`, async (store, effects) => {
        const calls = new Map<string, number>();
        const consumer = bareConsumer(store).on('order.created', async (p: { fail?: boolean }, { tx, envelope }) => {
          calls.set(envelope.id, (calls.get(envelope.id) ?? 0) + 1);
          await effects.insert(tx, envelope.id, 'g', 'x');
          if (p.fail) throw new Error('boom');
        });
        const messages = [{}, {}, { fail: true }, {}, {}].map((payload) => wire({ type: 'order.created', payload }));
        const dup = messages[0]!;
        const items = [...messages, dup].map((message) => ({ message, topic: 'order.created', replay: false }));
        const outcomes = await consumer.processor.process(items);
        expect(outcomes.map((o) => o.kind)).toEqual([
          'handled',
          'handled',
          'recorded',
          'handled',
          'handled',
          'duplicate',
        ]);
        expect(calls.get(messages[2]!.id)).toBe(1); // the failing handler ran once
        const rows = (await effects.rows()).map((r) => r.message_id).sort();
        expect(rows).toEqual([0, 1, 3, 4].map((i) => messages[i]!.id).sort()); // its write rolled back alone
        expect(await store.deadLetters.getDeadLetter(messages[2]!.id, 'g')).toMatchObject({
          status: 'pending',
          attempts: 1,
        });
        // Delivered again later: all duplicates, nothing runs.
        expect((await consumer.processor.process(items)).map((o) => o.kind)).toEqual([
          'duplicate',
          'duplicate',
          'recorded',
          'duplicate',
          'duplicate',
          'duplicate',
        ]);
      });
    });

    it('gives consecutive messages of a batch-handled type to one call, in order, around per-message handlers', async () => {
      await withStore(`batchh_${dialect}`, async (store, effects) => {
        const calls: string[][] = [];
        const consumer = bareConsumer(store)
          .onBatch('order.created', async (messages, { tx }) => {
            calls.push(messages.map((m) => m.envelope.id));
            for (const m of messages) await effects.insert(tx, m.envelope.id, 'g', 'batch');
          })
          .on('order.paid', async (_p, { tx, envelope }) => {
            calls.push([envelope.id]);
            await effects.insert(tx, envelope.id, 'g', 'single');
          });
        const [a1, a2, b1, a3] = ['order.created', 'order.created', 'order.paid', 'order.created'].map((type) =>
          wire({ type, payload: {} }),
        );
        const items = [a1!, a2!, b1!, a1!, a3!].map((message) => ({ message, topic: 't', replay: false }));
        const outcomes = await consumer.processor.process(items);
        expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled', 'handled', 'duplicate', 'handled']);
        expect(calls).toEqual([[a1!.id, a2!.id], [b1!.id], [a3!.id]]);
        expect((await effects.rows()).map((r) => r.message_id).sort()).toEqual([a1!.id, a2!.id, b1!.id, a3!.id].sort());
      });
    });

    it('runs each message of a failed batch call again alone, so only the failing one becomes a dead letter', async () => {
      await withStore(`batchf_${dialect}`, async (store, effects) => {
        const sizes: number[] = [];
        let replayed: boolean[] = [];
        let broken = true;
        const consumer = bareConsumer(store).onBatch<{ fail?: boolean }>(
          'order.created',
          async (messages, { tx, replay }) => {
            sizes.push(messages.length);
            replayed.push(replay);
            for (const m of messages) await effects.insert(tx, m.envelope.id, 'g', 'x');
            if (broken && messages.some((m) => m.payload.fail)) throw new Error('boom');
          },
        );
        const messages = [{}, {}, { fail: true }, {}].map((payload) => wire({ type: 'order.created', payload }));
        const items = messages.map((message) => ({ message, topic: 'order.created', replay: false }));
        const outcomes = await consumer.processor.process(items);
        expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled', 'recorded', 'handled']);
        expect(sizes).toEqual([4, 1, 1, 1, 1]); // one call for the batch, then each message alone
        expect((await effects.rows()).map((r) => r.message_id).sort()).toEqual(
          [0, 1, 3].map((i) => messages[i]!.id).sort(),
        );
        expect(await store.deadLetters.getDeadLetter(messages[2]!.id, 'g')).toMatchObject({
          status: 'pending',
          attempts: 1,
        });
        // The replay job's path: the dead letter alone, flagged as a replay.
        broken = false;
        replayed = [];
        const again = await consumer.processor.process([
          { message: messages[2]!, topic: 'order.created', replay: true },
        ]);
        expect(again.map((o) => o.kind)).toEqual(['handled']);
        expect(replayed).toEqual([true]);
        expect(await effects.rows()).toHaveLength(4);
      });
    });
  });
}
