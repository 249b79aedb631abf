import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { failureRecord } from '../../src/consumer/batch-processor.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { effectsTable, wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock, waitFor } from '../support/wait.js';

const ROWS = 300;
const noTransport = { subscribe: async () => ({ close: async () => undefined }) };

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  describe(`replay job on ${dialect}`, () => {
    let f: StoreFixture;
    let store: ConsumerStore;
    let effects: Awaited<ReturnType<typeof effectsTable>>;
    let group: string;

    beforeEach(async () => {
      f = await makeStore(`replay_${dialect}`);
      store = f.store as unknown as ConsumerStore;
      effects = await effectsTable(f);
      group = uniqueName('g');
    });
    afterEach(async () => f.teardown());

    /** Dead letters due now, as a failing consumer would have written them. */
    async function seed(n: number, perTx = 50): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i += perTx) {
        await store.transaction(async (tx) => {
          for (let j = i; j < Math.min(n, i + perTx); j++) {
            const message = wire({ type: 'order.created', payload: { j } });
            ids.push(message.id);
            const failure = failureRecord(
              { message, topic: 'order.created', replay: false },
              group,
              'boom',
              false,
              Date.now() - 1_000,
            );
            await store.deadLetters.recordDeliveryFailure(tx, failure, () => ({
              status: 'pending',
              nextRetryAt: Date.now() - 1_000,
            }));
          }
        });
      }
      return ids;
    }

    const consumer = (clock?: ManualClock) =>
      new Consumer({ group, store, transport: noTransport, logger: silentLogger, ...(clock ? { clock } : {}) }).on(
        'order.created',
        async (_p, { tx, envelope }) => {
          await effects.insert(tx, envelope.id, group, 'replayed');
        },
      );

    for (const replayers of [2, 3]) {
      it(`${replayers} replayers at once replay each due row exactly once`, async () => {
        const ids = await seed(ROWS);
        const c = consumer();
        const jobs = Array.from(
          { length: replayers },
          (_, i) => new ReplayJob(c, { owner: `r${i}`, batchSize: 25, concurrency: 5, ratePerSecond: 100_000 }),
        );
        const resolvedBy = await Promise.all(
          jobs.map(async (job) => {
            let total = 0;
            for (;;) {
              const n = await job.runOnce();
              total += n;
              if (n === 0 && (await store.deadLetters.countDeadLetters(group)).pending === 0) return total;
            }
          }),
        );
        expect(resolvedBy.reduce((a, b) => a + b, 0)).toBe(ROWS);
        expect(resolvedBy.filter((n) => n > 0).length).toBeGreaterThan(1);
        const rows = await effects.rows();
        expect(rows).toHaveLength(ROWS);
        expect(new Set(rows.map((r) => r.message_id))).toEqual(new Set(ids));
        expect(await store.deadLetters.countDeadLetters(group)).toMatchObject({
          resolved: ROWS,
          pending: 0,
          replaying: 0,
        });
      });
    }

    it('takes back a row whose replayer died, after its lease', async () => {
      const [id] = await seed(1);
      const clock = new ManualClock(Date.now());
      // A replayer claims the row and dies before settling it.
      const orphan = await store.deadLetters.claimDue({
        owner: 'dead-replayer',
        group,
        now: clock.now(),
        limit: 10,
        leaseMs: 30_000,
      });
      expect(orphan.map((r) => r.messageId)).toEqual([id]);
      const job = new ReplayJob(consumer(clock), { owner: 'survivor', ratePerSecond: 1_000 });
      clock.advance(29_999);
      expect(await job.runOnce()).toBe(0); // still leased
      clock.advance(1);
      expect(await job.runOnce()).toBe(1);
      expect(await store.deadLetters.getDeadLetter(id!, group)).toMatchObject({ status: 'resolved' });
      expect(await store.deadLetters.markResolved(orphan[0]!.id, 'dead-replayer', Date.now())).toBe(false);
    });

    // The child process replays on PostgreSQL.
    it.runIf(dialect === 'postgres')('replays again, once, the rows of a replayer killed mid-replay', async () => {
      const ids = await seed(3);
      const child = spawnTs('support/replayer-process.ts', {
        SURETY_PG_URL: testEnv.postgresUrl,
        SURETY_PG_SCHEMA: (f as unknown as { schema: string }).schema,
        SURETY_GROUP: group,
        SURETY_EFFECTS: effects.table,
      });
      const end = await exited(child);
      expect(end.signal, end.stderr).toBe('SIGKILL');
      expect((await store.deadLetters.countDeadLetters(group)).replaying).toBeGreaterThan(0);
      expect(await effects.rows()).toEqual([]); // its write died with its transaction
      const job = new ReplayJob(consumer(), { ratePerSecond: 1_000 });
      await waitFor('all rows resolved after the lease', async () => {
        await job.runOnce();
        return (await store.deadLetters.countDeadLetters(group)).resolved === 3;
      });
      const rows = await effects.rows();
      expect(rows.map((r) => r.message_id).sort()).toEqual([...ids].sort());
    });

    // The rate is the real limit: a started job claims again at once while rows are due. The handler
    // writes nothing, so the figure is the job's own pace (claims, inbox, transactions, resolves).
    it.runIf(dialect !== 'mysql')('replays 10,000 due rows at 5,000/s in about 2 s, never faster', async () => {
      const rows = 10_000;
      const rate = 5_000;
      await seed(rows, 1_000);
      let handled = 0;
      const c = new Consumer({ group, store, transport: noTransport, logger: silentLogger }).on(
        'order.created',
        async () => {
          handled += 1;
        },
      );
      const job = new ReplayJob(c, { ratePerSecond: rate });
      const started = performance.now();
      job.start();
      try {
        await waitFor(
          'every row resolved',
          async () => (await store.deadLetters.countDeadLetters(group)).resolved === rows,
          60_000,
          50,
        );
      } finally {
        await job.stop();
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(`replay on ${dialect}: ${rows} rows at ${rate}/s took ${seconds.toFixed(2)} s`);
      const ideal = rows / rate;
      expect(seconds).toBeLessThan(ideal * 4);
      // One second's worth of burst at most.
      expect(seconds).toBeGreaterThan(ideal - 1);
      expect(handled).toBe(rows);
    });

    it('never exceeds its rate limit', async () => {
      await seed(30);
      const job = new ReplayJob(consumer(), { ratePerSecond: 50, concurrency: 5, batchSize: 100 });
      const started = performance.now();
      expect(await job.runOnce()).toBe(30);
      const seconds = (performance.now() - started) / 1000;
      expect(30 / seconds).toBeLessThanOrEqual(50 * 1.05 + 5); // one initial token of burst
    });
  });
}
