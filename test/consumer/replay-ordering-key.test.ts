import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { WIRE_HEADERS } from '../../src/core/wire.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { wire, withEffects } from '../support/consumer-env.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock } from '../support/wait.js';

const noTransport = { subscribe: async () => ({ close: async () => undefined }) };

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  describe(`a replayed dead letter keeps its ordering key (${dialect})`, () => {
    it('is handled again with the ordering key it was first delivered with, not its business key', async () => {
      await withEffects(makeStore, `replay_ordkey_${dialect}`, async (store: ConsumerStore, effects) => {
        const clock = new ManualClock();
        let failing = true;
        const seen: { orderingKey: string; replay: boolean }[] = [];
        const consumer = new Consumer({ group: 'g', store, transport: noTransport, logger: silentLogger, clock }).on(
          'account.credited',
          async (_p, { tx, envelope, replay }) => {
            seen.push({ orderingKey: envelope.orderingKey, replay });
            if (failing) throw new Error('downstream unavailable');
            await effects.insert(tx, envelope.id, 'g', envelope.orderingKey);
          },
        );
        const message = wire({ type: 'account.credited', key: 'credit-1', orderingKey: 'acct-9', payload: {} });
        const [outcome] = await consumer.processor.process([{ message, topic: 'account.credited', replay: false }]);
        expect(outcome?.kind).toBe('recorded');
        const row = await store.deadLetters.getDeadLetter(message.id, 'g');
        expect(row?.headers[WIRE_HEADERS.orderingKey]).toBe('acct-9');

        failing = false;
        clock.advance(10 * 60_000); // past the first retry (1 min)
        expect(await new ReplayJob(consumer, { ratePerSecond: 1_000 }).runOnce()).toBe(1);
        expect(seen).toEqual([
          { orderingKey: 'acct-9', replay: false },
          { orderingKey: 'acct-9', replay: true },
        ]);
        expect((await effects.rows()).map((r) => r.note)).toEqual(['acct-9']);
      });
    });
  });
}
