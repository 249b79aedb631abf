import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ConsumerRetention } from '../../src/consumer/consumer-retention.js';
import type { DeadLetterRow, RetryDecision } from '../../src/ports/consumer-store.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { failure } from '../conformance/consumer-store-suite.js';
import { transportFactories } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock, waitFor } from '../support/wait.js';

const DAY = 86_400_000;
const dead = (): RetryDecision => ({ status: 'dead', nextRetryAt: null });

/** Dead letters of `group` in each state, settled at the given times. */
async function seedDeadLetters(store: ConsumerStore, group: string, settledAt: { resolved: number; ignored: number }) {
  const record = async (now: number, decision: RetryDecision): Promise<DeadLetterRow> => {
    const f = failure({ group, now });
    await store.transaction((tx) => store.deadLetters.recordDeliveryFailure(tx, f, () => decision));
    return (await store.deadLetters.getDeadLetter(f.messageId, group))!;
  };
  const resolved = await record(settledAt.resolved - 1, { status: 'pending', nextRetryAt: settledAt.resolved - 1 });
  await store.deadLetters.claimDue({ owner: 'r', group, now: settledAt.resolved, limit: 10, leaseMs: 1_000 });
  expect(await store.deadLetters.markResolved(resolved.id, 'r', settledAt.resolved)).toBe(true);
  const ignored = await record(settledAt.ignored - 1, dead());
  expect(await store.deadLetters.ignore(ignored.id, 'obsolete', settledAt.ignored)).toBe(true);
  const deadRow = await record(1 * DAY, dead());
  return { resolved, ignored, deadRow };
}

const exists = async (store: ConsumerStore, row: DeadLetterRow) =>
  (await store.deadLetters.getDeadLetter(row.messageId, row.group)) !== undefined;

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  it(`consumer retention purges old inbox rows and settled dead letters, in batches (${dialect})`, async () => {
    const f = await makeStore(`cons_ret_${dialect}`);
    try {
      const store = f.store as unknown as ConsumerStore;
      const clock = new ManualClock(100 * DAY);
      await store.transaction(async (tx) => {
        for (let i = 0; i < 25; i++) await store.inbox.recordInbox(tx, `old-${i}`, 'billing', 90 * DAY);
        await store.inbox.recordInbox(tx, 'recent', 'billing', 99 * DAY);
      });
      const old = [];
      for (let i = 0; i < 6; i++)
        old.push(await seedDeadLetters(store, 'billing', { resolved: 60 * DAY, ignored: 65 * DAY }));
      const recent = await seedDeadLetters(store, 'billing', { resolved: 80 * DAY, ignored: 95 * DAY });
      const windows = { inboxWindowMs: 7 * DAY, settledDeadLettersMs: 30 * DAY, intervalMs: 1_000, batchSize: 5 };
      const job = new ConsumerRetention(store, clock, windows, silentLogger);

      expect(await job.runOnce()).toEqual({ inbox: 25, settledDeadLetters: 12 });
      expect(await store.inbox.inboxRecordedAt('old-0', 'billing')).toBeUndefined();
      expect(await store.inbox.inboxRecordedAt('recent', 'billing')).toBe(99 * DAY);
      for (const o of old) {
        expect(await exists(store, o.resolved)).toBe(false);
        expect(await exists(store, o.ignored)).toBe(false);
        expect(await exists(store, o.deadRow)).toBe(true);
      }
      for (const row of Object.values(recent)) expect(await exists(store, row)).toBe(true);
      expect(await job.runOnce()).toEqual({ inbox: 0, settledDeadLetters: 0 });
    } finally {
      await f.teardown();
    }
  });
}

describe('consumer retention', () => {
  it('keeps a kind of row forever when its window is 0', async () => {
    const f = await storeFixtures.sqlite('cons_ret_keep');
    try {
      const store = f.store as unknown as ConsumerStore;
      await store.transaction((tx) => store.inbox.recordInbox(tx, 'old', 'billing', 1 * DAY));
      const rows = await seedDeadLetters(store, 'billing', { resolved: 2 * DAY, ignored: 2 * DAY });
      const clock = new ManualClock(1_000 * DAY);
      const options = { inboxWindowMs: 0, settledDeadLettersMs: 0, intervalMs: 1_000, batchSize: 10 };
      const keepAll = new ConsumerRetention(store, clock, options, silentLogger);
      expect(await keepAll.runOnce()).toEqual({ inbox: 0, settledDeadLetters: 0 });
      const inboxOnly = new ConsumerRetention(store, clock, { ...options, inboxWindowMs: DAY }, silentLogger);
      expect(await inboxOnly.runOnce()).toEqual({ inbox: 1, settledDeadLetters: 0 });
      expect(await exists(store, rows.resolved)).toBe(true);
      expect(await exists(store, rows.ignored)).toBe(true);
    } finally {
      await f.teardown();
    }
  });

  it('runs periodically in a started consumer, on the consumer clock', async () => {
    const f = await storeFixtures.sqlite('cons_ret_job');
    const t = await transportFactories.embedded();
    const group = uniqueName('billing');
    const store = f.store as unknown as ConsumerStore;
    const consumer = new Consumer({
      group,
      store,
      transport: t.transport,
      logger: silentLogger,
      clock: new ManualClock(100 * DAY),
      retention: { intervalMs: 10 }, // default windows: inbox 7 days, settled dead letters 30 days
    }).on('order.created', async () => undefined);
    try {
      await store.transaction(async (tx) => {
        await store.inbox.recordInbox(tx, 'old', group, 90 * DAY);
        await store.inbox.recordInbox(tx, 'recent', group, 99 * DAY);
      });
      const old = await seedDeadLetters(store, group, { resolved: 60 * DAY, ignored: 65 * DAY });
      const recent = await seedDeadLetters(store, group, { resolved: 71 * DAY, ignored: 95 * DAY });
      await consumer.start();
      await waitFor(
        'the retention job to purge',
        async () =>
          !(await exists(store, old.resolved)) &&
          !(await exists(store, old.ignored)) &&
          (await store.inbox.inboxRecordedAt('old', group)) === undefined,
        10_000,
      );
      expect(await exists(store, old.deadRow)).toBe(true);
      for (const row of Object.values(recent)) expect(await exists(store, row)).toBe(true);
      expect(await store.inbox.inboxRecordedAt('recent', group)).toBe(99 * DAY);
    } finally {
      await consumer.stop();
      await t.close();
      await f.teardown();
    }
  });

  it('validates the retention option, naming it and its allowed values', async () => {
    const f = await storeFixtures.sqlite('cons_ret_opt');
    const base = {
      group: 'billing',
      store: f.store as unknown as ConsumerStore,
      transport: { subscribe: async () => ({ close: async () => undefined }) },
    };
    try {
      expect(() => new Consumer({ ...base, retention: { inboxWindowMs: 5 } })).toThrow(
        /consumer\.retention\.inboxWindowMs.*0 \(keep forever\) or at least 60000/,
      );
      expect(() => new Consumer({ ...base, retention: { settledDeadLettersMs: -1 } })).toThrow(
        /consumer\.retention\.settledDeadLettersMs/,
      );
      expect(new Consumer(base).options.retention).toEqual({
        inboxWindowMs: 7 * DAY,
        settledDeadLettersMs: 30 * DAY,
        intervalMs: 60_000,
        batchSize: 1_000,
      });
      const nothing = { inboxWindowMs: 0, settledDeadLettersMs: 0 };
      expect(new Consumer({ ...base, retention: nothing }).options.retention).toBe(false);
      expect(new Consumer({ ...base, retention: false }).options.retention).toBe(false);
    } finally {
      await f.teardown();
    }
  });
});
