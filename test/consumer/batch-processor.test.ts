import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/consumer-store.js';
import { effectsTable, wire } from '../support/consumer-env.js';
import { storeFixtures } from '../support/stores.js';

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  describe(`batch processing (${dialect})`, () => {
    it('rolls back only the failing message of a batch and never runs it twice', async () => {
      const f = await makeStore(`batch_${dialect}`);
      try {
        const store = f.store as unknown as ConsumerStore;
        const effects = await effectsTable(f);
        const calls = new Map<string, number>();
        const consumer = new Consumer({
          group: 'g',
          store,
          transport: { subscribe: async () => ({ close: async () => undefined }) },
          logger: silentLogger,
        }).on('order.created', async (p: { fail?: boolean }, { tx, envelope }) => {
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
        expect(await store.getDeadLetter(messages[2]!.id, 'g')).toMatchObject({ status: 'pending', attempts: 1 });
        // Delivered again later: all duplicates, nothing runs.
        expect((await consumer.processor.process(items)).map((o) => o.kind)).toEqual([
          'duplicate',
          'duplicate',
          'recorded',
          'duplicate',
          'duplicate',
          'duplicate',
        ]);
      } finally {
        await f.teardown();
      }
    });
  });
}
