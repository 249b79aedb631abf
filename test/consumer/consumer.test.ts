import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { PermanentError } from '../../src/consumer/errors.js';
import { fetchBack } from '../../src/consumer/fetch-back.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { effectsTable, transportFactories, wire, type TransportHandle } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

const MIN = 60_000;

for (const [broker, makeTransport] of Object.entries(transportFactories)) {
  for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
    describe(`consumer: ${broker} + ${dialect}`, () => {
      let f: StoreFixture;
      let store: ConsumerStore;
      let t: TransportHandle;
      let effects: Awaited<ReturnType<typeof effectsTable>>;
      let group: string;
      const consumers: Consumer[] = [];

      beforeEach(async () => {
        f = await makeStore(`c_${broker}_${dialect}`);
        store = f.store as unknown as ConsumerStore;
        t = await makeTransport();
        effects = await effectsTable(f);
        group = uniqueName('grp');
      });
      afterEach(async () => {
        for (const c of consumers.splice(0)) await c.stop();
        await t.close();
        await f.teardown();
      });

      const consumer = (extra: Partial<ConstructorParameters<typeof Consumer>[0]> = {}) => {
        const c = new Consumer({
          group,
          store,
          transport: t.transport,
          logger: silentLogger,
          batchWindowMs: 5,
          ...extra,
        });
        consumers.push(c);
        return c;
      };
      const publish = async (topic: string, message = wire({ type: topic, payload: { n: 1 } })) => {
        await t.publishRaw(topic, message);
        return message;
      };

      it('has its effect once when the same message is delivered twice', async () => {
        await t.prepare(group, 'order.created');
        const c = consumer().on(
          'order.created',
          async (_p, { tx, envelope }) => void (await effects.insert(tx, envelope.id, group, 'x')),
        );
        await c.start();
        const m = await publish('order.created');
        await publish('order.created', m); // a redelivery: same id
        const other = await publish('order.created');
        await waitFor(
          'both ids recorded',
          async () => (await store.inbox.inboxRecordedAt(other.id, group)) !== undefined,
        );
        await waitFor('duplicate settled', async () => (await effects.rows()).length >= 2);
        const rows = await effects.rows();
        expect(rows.map((r) => r.message_id).sort()).toEqual([m.id, other.id].sort());
      });

      it('records a failing handler as a pending dead letter, acks, and keeps later messages flowing', async () => {
        await t.prepare(group, 'order.created');
        await t.prepare(group, 'order.poisoned');
        const c = consumer()
          .on('order.created', async (p: { fail?: boolean }, { tx, envelope }) => {
            if (p.fail) throw new Error('downstream unavailable');
            await effects.insert(tx, envelope.id, group, 'ok');
          })
          .on('order.poisoned', async () => {
            throw new PermanentError('order total is negative');
          });
        await c.start();
        const bad = await publish('order.created', wire({ type: 'order.created', payload: { fail: true } }));
        const permanent = await publish('order.poisoned');
        const good = await publish('order.created', wire({ type: 'order.created', payload: {} }));
        await waitFor('good handled', async () => (await effects.rows()).some((r) => r.message_id === good.id));
        await waitFor(
          'dead letters recorded',
          async () => (await store.deadLetters.getDeadLetter(permanent.id, group)) !== undefined,
        );
        const dl = (await store.deadLetters.getDeadLetter(bad.id, group))!;
        expect(dl).toMatchObject({ status: 'pending', attempts: 1, type: 'order.created', poison: false });
        expect(dl.lastError).toContain('downstream unavailable');
        expect(dl.nextRetryAt! - dl.updatedAt).toBe(1 * MIN); // first step of the default schedule
        expect(await store.deadLetters.getDeadLetter(permanent.id, group)).toMatchObject({
          status: 'dead',
          attempts: 1,
        });
        expect(await store.inbox.inboxRecordedAt(bad.id, group)).toBeUndefined(); // its effects rolled back
      });

      it('handles and dead-letters as usual when every log line throws', async () => {
        await t.prepare(group, 'order.created');
        let lines = 0;
        const throwing = () => {
          lines++;
          throw new Error('log destination closed');
        };
        const logger = { debug: throwing, info: throwing, warn: throwing, error: throwing };
        const c = consumer({ logger }).on('order.created', async (p: { fail?: boolean }, { tx, envelope }) => {
          if (p.fail) throw new PermanentError('rejected');
          await effects.insert(tx, envelope.id, group, 'ok');
        });
        await c.start();
        const bad = await publish('order.created', wire({ type: 'order.created', payload: { fail: true } }));
        const good = await publish('order.created', wire({ type: 'order.created', payload: {} }));
        await waitFor('good handled', async () => (await effects.rows()).some((r) => r.message_id === good.id));
        await waitFor(
          'bad dead-lettered',
          async () => (await store.deadLetters.getDeadLetter(bad.id, group)) !== undefined,
        );
        expect(await store.deadLetters.getDeadLetter(bad.id, group)).toMatchObject({ status: 'dead', attempts: 1 });
        expect(lines).toBeGreaterThan(0); // it did try to log, and the lines were dropped
      });

      it('keeps nothing a failed handler was still writing when it threw', async () => {
        await t.prepare(group, 'order.created');
        const c = consumer().on('order.created', async (p: { fail?: boolean }, { tx, envelope }) => {
          const writes = effects
            .insert(tx, envelope.id, group, 'first')
            .then(() => effects.insert(tx, envelope.id, group, 'second')); // issued once the first is done
          if (!p.fail) return void (await writes);
          writes.catch(() => undefined); // refused once the handler has thrown
          throw new PermanentError('rejected while writing');
        });
        await c.start();
        const bad = await publish('order.created', wire({ type: 'order.created', payload: { fail: true } }));
        const good = await publish('order.created', wire({ type: 'order.created', payload: {} }));
        await waitFor(
          'bad dead-lettered',
          async () => (await store.deadLetters.getDeadLetter(bad.id, group)) !== undefined,
        );
        await waitFor(
          'good handled',
          async () => (await effects.rows()).filter((r) => r.message_id === good.id).length === 2,
        );
        expect((await effects.rows()).filter((r) => r.message_id === bad.id)).toEqual([]);
      });

      // In the rerun under savepoints, what a failed handler still had under way would follow
      // ROLLBACK TO SAVEPOINT and commit with the batch.
      it('keeps nothing a handler that fails on the rerun was still writing', async () => {
        await t.prepare(group, 'order.created');
        const calls = new Map<string, number>();
        const c = consumer().on('order.created', async (p: { fail?: boolean }, { tx, envelope }) => {
          if (p.fail) throw new PermanentError('fails every time'); // makes the batch run again
          const call = (calls.get(envelope.id) ?? 0) + 1;
          calls.set(envelope.id, call);
          const writes = effects
            .insert(tx, envelope.id, group, 'first')
            .then(() => effects.insert(tx, envelope.id, group, 'second'));
          if (call === 1) return void (await writes);
          writes.catch(() => undefined); // refused once the handler has thrown
          throw new PermanentError('fails on the rerun');
        });
        // Both in the queue before the consumer starts, so that they share a batch, the flaky one first:
        // it succeeds in the first pass, which the other then fails.
        const flaky = await publish('order.created', wire({ type: 'order.created', payload: {} }));
        const bad = await publish('order.created', wire({ type: 'order.created', payload: { fail: true } }));
        await c.start();
        await waitFor('both dead-lettered', async () =>
          Boolean(
            (await store.deadLetters.getDeadLetter(bad.id, group)) &&
            (await store.deadLetters.getDeadLetter(flaky.id, group)),
          ),
        );
        expect(calls.get(flaky.id)).toBe(2); // once in the batch's first pass, once in its rerun
        expect((await effects.rows()).filter((r) => r.message_id === flaky.id)).toEqual([]);
      });

      it('dead-letters a poison body and an unknown version at once without blocking', async () => {
        await t.prepare(group, 'order.created');
        const c = consumer().on(
          'order.created',
          async (_p, { tx, envelope }) => void (await effects.insert(tx, envelope.id, group, 'ok')),
          { version: 2 },
        );
        await c.start();
        const garbage = await publish('order.created', {
          ...wire({ type: 'order.created', payload: {} }),
          body: Buffer.from([0xff, 0x00, 0x7b]),
        });
        const future = await publish('order.created', wire({ type: 'order.created', version: 3, payload: {} }));
        const good = await publish('order.created', wire({ type: 'order.created', version: 2, payload: {} }));
        await waitFor('good handled', async () => (await effects.rows()).some((r) => r.message_id === good.id));
        await waitFor(
          'poison recorded',
          async () => (await store.deadLetters.getDeadLetter(future.id, group)) !== undefined,
        );
        expect(await store.deadLetters.getDeadLetter(garbage.id, group)).toMatchObject({
          status: 'dead',
          poison: true,
          bodyEncoding: 'base64',
        });
        expect((await store.deadLetters.getDeadLetter(future.id, group))?.lastError).toContain(
          'newer than the handler',
        );
      });

      it('upcasts a v1 message for a v2 handler', async () => {
        await t.prepare(group, 'customer.renamed');
        const seen: unknown[] = [];
        const c = consumer()
          .on(
            'customer.renamed',
            async (p, { tx, envelope }) => {
              seen.push(p);
              await effects.insert(tx, envelope.id, group, JSON.stringify(p));
            },
            { version: 2 },
          )
          .upcast('customer.renamed', 1, (p) => {
            const { name } = p as { name: string };
            const [first, last] = name.split(' ');
            return { firstName: first, lastName: last };
          });
        await c.start();
        await publish(
          'customer.renamed',
          wire({ type: 'customer.renamed', version: 1, payload: { name: 'Ada Lovelace' } }),
        );
        await waitFor('handled', () => seen.length === 1);
        expect(seen[0]).toEqual({ firstName: 'Ada', lastName: 'Lovelace' });
      });

      it('replays a failed message once the downstream recovers, through the idempotent path', async () => {
        await t.prepare(group, 'order.created');
        let downstreamUp = false;
        const c = consumer({ deadLetters: { scheduleMs: [0], maxAttempts: 5 } }).on(
          'order.created',
          async (_p, { tx, envelope }) => {
            if (!downstreamUp) throw new Error('downstream down');
            await effects.insert(tx, envelope.id, group, 'replayed');
          },
        );
        await c.start();
        const m = await publish('order.created');
        await waitFor('dead letter', async () => (await store.deadLetters.getDeadLetter(m.id, group)) !== undefined);
        const replay = new ReplayJob(c, { intervalMs: 20 });
        expect(await replay.runOnce()).toBe(0); // still down: rescheduled
        expect(await store.deadLetters.getDeadLetter(m.id, group)).toMatchObject({ status: 'pending', attempts: 2 });
        downstreamUp = true;
        expect(await replay.runOnce()).toBe(1);
        expect(await store.deadLetters.getDeadLetter(m.id, group)).toMatchObject({ status: 'resolved' });
        expect((await effects.rows()).map((r) => r.message_id)).toEqual([m.id]);
      });

      it('converges on the latest state with notify-then-fetch-back, out of order and twice', async () => {
        await t.prepare(group, 'customer.changed');
        const producerState = { version: 3, state: { name: 'v3' } };
        const c = consumer().on(
          'customer.changed',
          fetchBack<{ name: string }>({
            fetch: async () => producerState,
            currentVersion: async (tx, key) => {
              const { rows } = await tx.query<{ note: string }>(
                `SELECT note FROM ${effects.table} WHERE message_id = ${effects.placeholder(1)}`,
                [key],
              );
              return rows[0] ? Number(JSON.parse(rows[0].note).version) : undefined;
            },
            apply: async (tx, key, state, version) => {
              await tx.query(`DELETE FROM ${effects.table} WHERE message_id = ${effects.placeholder(1)}`, [key]);
              await effects.insert(tx, key, group, JSON.stringify({ version, ...state }));
            },
          }),
        );
        await c.start();
        // Notifications for versions 2, 1, 3, 3 arrive; the producer already holds version 3.
        const notes = [2, 1, 3, 3].map((v) => wire({ type: 'customer.changed', key: 'cust-1', payload: { v } }));
        for (const n of notes) await publish('customer.changed', n);
        await waitFor('all handled', async () => {
          for (const n of notes) if ((await store.inbox.inboxRecordedAt(n.id, group)) === undefined) return false;
          return true;
        });
        const rows = await effects.rows();
        expect(rows).toHaveLength(1);
        expect(JSON.parse(rows[0]!.note)).toEqual({ version: 3, name: 'v3' });
      });
    });
  }
}

describe('consumer options', () => {
  it('refuses two retry engines on one consumer', async () => {
    const f = await storeFixtures.sqlite('opts');
    try {
      const make = (extra: Partial<ConstructorParameters<typeof Consumer>[0]>) => () =>
        new Consumer({
          group: 'billing',
          store: f.store as unknown as ConsumerStore,
          transport: { subscribe: async () => ({ close: async () => undefined }) },
          ...extra,
        });
      expect(make({ deadLetters: { scheduleMs: [1000] }, brokerRetry: { enabled: true } })).toThrow(
        /consumer\.brokerRetry.*choose one retry engine/,
      );
      expect(make({ group: 'bad group!' })).toThrow(/consumer\.group/);
      expect(make({ logger: { info: () => undefined } as never })).toThrow(
        /consumer\.logger.*debug, info, warn and error/,
      );
    } finally {
      await f.teardown();
    }
  });
});
