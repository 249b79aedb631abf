import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { InboxRetention } from '../../src/consumer/inbox-retention.js';
import type { ConsumerStore } from '../../src/ports/consumer-store.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock } from '../support/wait.js';

const DAY = 86_400_000;

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  it(`inbox retention deletes only rows older than the window (${dialect})`, async () => {
    const f = await makeStore(`inbox_ret_${dialect}`);
    try {
      const store = f.store as unknown as ConsumerStore;
      const clock = new ManualClock(100 * DAY);
      await store.transaction(async (tx) => {
        for (let i = 0; i < 25; i++) await store.recordInbox(tx, `old-${i}`, 'billing', 90 * DAY);
        await store.recordInbox(tx, 'recent', 'billing', 99 * DAY);
      });
      const job = new InboxRetention(
        store,
        clock,
        { windowMs: 7 * DAY, intervalMs: 1_000, batchSize: 10 },
        silentLogger,
      );
      expect(await job.runOnce()).toBe(25);
      expect(await store.inboxRecordedAt('old-0', 'billing')).toBeUndefined();
      expect(await store.inboxRecordedAt('recent', 'billing')).toBe(99 * DAY);
      expect(await job.runOnce()).toBe(0);
    } finally {
      await f.teardown();
    }
  });
}

describe('inbox retention option', () => {
  it('refuses a window shorter than a minute', async () => {
    const { Consumer } = await import('../../src/consumer/consumer.js');
    const f = await storeFixtures.sqlite('inbox_opt');
    try {
      expect(
        () =>
          new Consumer({
            group: 'billing',
            store: f.store as unknown as ConsumerStore,
            transport: { subscribe: async () => ({ close: async () => undefined }) },
            inboxRetention: { windowMs: 5 },
          }),
      ).toThrow(/consumer\.inboxRetention\.windowMs/);
    } finally {
      await f.teardown();
    }
  });
});
