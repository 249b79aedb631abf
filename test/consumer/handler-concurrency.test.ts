import type { PoolConnection } from 'mysql2/promise';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { Store } from '../../src/ports/store.js';
import { Outbox } from '../../src/producer/outbox.js';
import type { MysqlStore } from '../../src/stores/mysql/index.js';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { makeMysqlFixture } from '../stores/mysql-fixture.js';
import { effectsTable, withEffects, wire, type Effects } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';

/** A consumer with no broker: the tests drive its processor directly. */
const consumerOn = (store: ConsumerStore, handlerConcurrency: number, perKeySerial = true) =>
  new Consumer({
    group: 'g',
    store,
    handlerConcurrency,
    perKeySerial,
    transport: { subscribe: async () => ({ close: async () => undefined }) },
    logger: silentLogger,
  });

const items = (messages: ReturnType<typeof wire>[]) =>
  messages.map((message) => ({ message, topic: 'order.created', replay: false }));

/** A promise and its resolver, to make one handler wait for an event in another. */
function signal() {
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  return { fire, fired };
}

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  const withStore = (label: string, test: (store: ConsumerStore, effects: Effects) => Promise<void>) =>
    withEffects(makeStore, label, test);

  describe(`handlerConcurrency (${dialect})`, () => {
    it('runs handlers of different keys at once and handlers of one key one after another, in order', async () => {
      await withStore(`hc_order_${dialect}`, async (store, effects) => {
        const otherKeyStarted = signal();
        const log: string[] = [];
        const consumer = consumerOn(store, 4).on('order.created', async (p: { n: number }, { tx, envelope }) => {
          log.push(`start ${envelope.key}${p.n}`);
          // a1 waits until a handler of key b runs: with one handler at a time this would never end.
          if (p.n === 1 && envelope.key === 'a') await otherKeyStarted.fired;
          if (envelope.key === 'b') otherKeyStarted.fire();
          await effects.insert(tx, envelope.id, 'g', `${envelope.key}${p.n}`);
          log.push(`end ${envelope.key}${p.n}`);
        });
        const messages = [
          { key: 'a', n: 1 },
          { key: 'a', n: 2 },
          { key: 'b', n: 1 },
          { key: 'a', n: 3 },
          { key: 'b', n: 2 },
        ].map(({ key, n }) => wire({ type: 'order.created', key, payload: { n } }));
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled', 'handled', 'handled', 'handled']);
        expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1')); // concurrent across keys
        for (const key of ['a', 'b']) {
          const mine = log.filter((e) => e.endsWith(key + '1') || e.endsWith(key + '2') || e.endsWith(key + '3'));
          const expected = (key === 'a' ? [1, 2, 3] : [1, 2]).flatMap((n) => [`start ${key}${n}`, `end ${key}${n}`]);
          expect(mine).toEqual(expected); // serial and in order within a key
        }
        expect((await effects.rows()).map((r) => r.note).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
      });
    });

    it('runs handlers of one ordering key one after another, in order, whatever their business keys', async () => {
      await withStore(`hc_ordkey_${dialect}`, async (store, effects) => {
        const log: string[] = [];
        const consumer = consumerOn(store, 4).on('order.created', async (p: { n: number }, { tx, envelope }) => {
          log.push(`start ${p.n}`);
          await new Promise((resolve) => setImmediate(resolve)); // still running a turn later
          await effects.insert(tx, envelope.id, 'g', envelope.orderingKey);
          log.push(`end ${p.n}`);
        });
        // Three events of one customer, each with a business key of its own (the default: its id).
        const messages = [1, 2, 3].map((n) =>
          wire({ type: 'order.created', orderingKey: 'customer-1', payload: { n } }),
        );
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled', 'handled']);
        expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
        expect((await effects.rows()).map((r) => r.note)).toEqual(['customer-1', 'customer-1', 'customer-1']);
      });
    });

    it('with perKeySerial false, runs handlers of one key at once too', async () => {
      await withStore(`hc_nokey_${dialect}`, async (store, effects) => {
        const secondStarted = signal();
        const consumer = consumerOn(store, 2, false).on('order.created', async (p: { n: number }, { tx, envelope }) => {
          if (p.n === 1)
            await secondStarted.fired; // would never end if the key still ran serially
          else secondStarted.fire();
          await effects.insert(tx, envelope.id, 'g', String(p.n));
        });
        const messages = [1, 2].map((n) => wire({ type: 'order.created', key: 'same', payload: { n } }));
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled']);
        expect((await effects.rows()).map((r) => r.note).sort()).toEqual(['1', '2']);
      });
    });

    it('calls a batch handler only after the per-message handlers before it have finished', async () => {
      await withStore(`hc_mixed_${dialect}`, async (store, effects) => {
        const log: string[] = [];
        const consumer = consumerOn(store, 4)
          .on('order.paid', async (p: { n: number }, { tx, envelope }) => {
            log.push(`start p${p.n}`);
            await new Promise((resolve) => setImmediate(resolve)); // still running a turn later
            await effects.insert(tx, envelope.id, 'g', `p${p.n}`);
            log.push(`end p${p.n}`);
          })
          .onBatch('order.created', async (messages, { tx }) => {
            log.push(`batch ${messages.length}`);
            for (const m of messages) await effects.insert(tx, m.envelope.id, 'g', 'b');
          });
        const messages = [
          wire({ type: 'order.paid', key: 'x', payload: { n: 1 } }),
          wire({ type: 'order.paid', key: 'y', payload: { n: 2 } }),
          wire({ type: 'order.created', key: 'z', payload: {} }),
          wire({ type: 'order.created', key: 'w', payload: {} }),
          wire({ type: 'order.paid', key: 'v', payload: { n: 3 } }),
        ];
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.every((o) => o.kind === 'handled')).toBe(true);
        const at = (e: string) => log.indexOf(e);
        expect(Math.max(at('end p1'), at('end p2'))).toBeLessThan(at('batch 2'));
        expect(at('batch 2')).toBeLessThan(at('start p3'));
        expect((await effects.rows()).length).toBe(5);
      });
    });

    it('never runs more than handlerConcurrency handlers at once, and a key waiting for its turn holds no slot', async () => {
      await withStore(`hc_limit_${dialect}`, async (store, effects) => {
        let inFlight = 0;
        let most = 0;
        const started: string[] = [];
        const consumer = consumerOn(store, 2).on('order.created', async (p: { n: number }, { tx, envelope }) => {
          most = Math.max(most, ++inFlight);
          started.push(`${envelope.key}${p.n}`);
          await effects.insert(tx, envelope.id, 'g', envelope.key);
          inFlight--;
        });
        // Four of key a first: the b and c messages must not wait behind them for a slot.
        const keys = ['a', 'a', 'a', 'a', 'b', 'c'];
        const messages = keys.map((key, n) => wire({ type: 'order.created', key, payload: { n } }));
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.every((o) => o.kind === 'handled')).toBe(true);
        expect(most).toBe(2);
        expect(started.slice(0, 2)).toEqual(['a0', 'b4']); // b took the free slot while a1 waited for a0
        expect((await effects.rows()).length).toBe(6);
      });
    });

    it('gives outbox rows added by handlers at once for one ordering key distinct, increasing key_seq', async () => {
      await withStore(`hc_seq_${dialect}`, async (store) => {
        const outbox = new Outbox({ store: store as unknown as Store, ordered: true });
        const consumer = consumerOn(store, 4).on('order.created', async (p: { n: number }, { tx }) => {
          await outbox.add(tx, { type: 'invoice.created', key: `i${p.n}`, orderingKey: 'customer-1', payload: p });
        });
        const messages = [0, 1, 2, 3, 4, 5].map((n) => wire({ type: 'order.created', key: `k${n}`, payload: { n } }));
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.every((o) => o.kind === 'handled')).toBe(true);
        const table = (store as unknown as Store).outbox.outboxTable;
        const { rows } = await store.transaction((tx) =>
          tx.query<{ key_seq: number | string }>(`SELECT key_seq FROM ${table}`),
        );
        expect(rows.map((r) => Number(r.key_seq)).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
      });
    });

    it('waits for handlers in flight when one fails, then isolates the failure under savepoints', async () => {
      await withStore(`hc_fail_${dialect}`, async (store, effects) => {
        const calls = new Map<number, number>();
        const failing = signal();
        const consumer = consumerOn(store, 8).on('order.created', async (p: { n: number }, { tx, envelope }) => {
          calls.set(p.n, (calls.get(p.n) ?? 0) + 1);
          if (p.n === 3) {
            failing.fire();
            throw new Error('boom');
          }
          // Handlers started before the failure are still writing when it is seen, a turn of the
          // event loop later: a rollback that did not wait for them would leave their rows committed.
          if (p.n < 3) {
            await failing.fired;
            await new Promise((resolve) => setImmediate(resolve));
          }
          await effects.insert(tx, envelope.id, 'g', String(p.n));
        });
        const messages = [0, 1, 2, 3, 4, 5, 6, 7].map((n) =>
          wire({ type: 'order.created', key: `k${n}`, payload: { n } }),
        );
        const outcomes = await consumer.processor.process(items(messages));
        expect(outcomes.map((o) => o.kind)).toEqual([
          'handled',
          'handled',
          'handled',
          'recorded',
          'handled',
          'handled',
          'handled',
          'handled',
        ]);
        expect(calls.get(3)).toBe(1); // the one failure is recorded as seen, not run again
        expect((await effects.rows()).map((r) => Number(r.note)).sort()).toEqual([0, 1, 2, 4, 5, 6, 7]);
        expect(await store.deadLetters.getDeadLetter(messages[3]!.id, 'g')).toMatchObject({
          status: 'pending',
          attempts: 1,
        });
      });
    });
  });
}

describe('PostgreSQL: statements of concurrent handlers, and errors a handler swallows', () => {
  /** A store on the pool Surety creates (pipelined by default), or on the given pg Pool. */
  const withPgStore = async (
    label: string,
    pool: pg.Pool | undefined,
    test: (store: PostgresStore, effects: Awaited<ReturnType<typeof effectsTable>>) => Promise<void>,
  ) => {
    const schema = uniqueName(label);
    const store = await createPostgresStore(
      pool ? { pool, schema } : { connectionString: testEnv.postgresUrl, schema },
    );
    try {
      await store.migrate();
      await test(store, await effectsTable({ store } as unknown as StoreFixture));
    } finally {
      await store.transaction((tx) => tx.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      await store.close();
    }
  };

  for (const pipeline of [true, false]) {
    it(`runs 16 handlers at once on a ${pipeline ? 'pipelined' : 'plain'} pool: statements ${pipeline ? 'overlap' : 'one at a time'}`, async () => {
      const pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 4, pipeline } as pg.PoolConfig);
      let inFlight = 0;
      let most = 0;
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        (client as unknown as { query: typeof query }).query = (...args) => {
          most = Math.max(most, ++inFlight);
          return query(...args).finally(() => inFlight--);
        };
      });
      try {
        await withPgStore(`hc_pipe_${pipeline}`, pool, async (store, effects) => {
          const consumer = consumerOn(store, 16).on('order.created', async (_p, { tx, envelope }) => {
            await effects.insert(tx, envelope.id, 'g', 'x');
            await tx.query('SELECT 1');
          });
          const messages = Array.from({ length: 100 }, (_, n) =>
            wire({ type: 'order.created', key: `k${n}`, payload: {} }),
          );
          most = 0;
          const outcomes = await consumer.processor.process(items(messages));
          expect(outcomes.every((o) => o.kind === 'handled')).toBe(true);
          expect((await effects.rows()).length).toBe(100);
          // pg deprecates queueing on a busy plain client; a pipelined one is meant to carry many.
          if (pipeline) expect(most).toBeGreaterThan(1);
          else expect(most).toBe(1);
        });
      } finally {
        await pool.end();
      }
    });
  }

  it('re-runs alone every message of a batch in which one statement failed and aborted the others', async () => {
    await withPgStore('hc_abort', undefined, async (store, effects) => {
      const consumer = consumerOn(store, 8).on('order.created', async (p: { dup?: boolean }, { tx, envelope }) => {
        // A unique violation: PostgreSQL refuses every later statement of the transaction (25P02).
        if (p.dup) await tx.query(`INSERT INTO ${effects.table} VALUES ('same', 'g', 'x'), ('same', 'g', 'x')`);
        await effects.insert(tx, envelope.id, 'g', 'x');
      });
      await store.transaction((tx) =>
        tx.query(`CREATE UNIQUE INDEX ON ${effects.table} (message_id)`).then(() => undefined),
      );
      const messages = [{}, {}, { dup: true }, {}, {}, {}].map((payload, n) =>
        wire({ type: 'order.created', key: `k${n}`, payload }),
      );
      const outcomes = await consumer.processor.process(items(messages));
      expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled', 'recorded', 'handled', 'handled', 'handled']);
      const dead = await store.deadLetters.getDeadLetter(messages[2]!.id, 'g');
      expect(dead?.lastError).toMatch(/23505/); // the real cause, not a collateral 25P02
      expect((await effects.rows()).length).toBe(5);
    });
  });

  it('never acks a message whose handler caught a failed statement: COMMIT would have rolled it back', async () => {
    await withPgStore('hc_swallow', undefined, async (store, effects) => {
      const consumer = consumerOn(store, 1).on('order.created', async (p: { swallow?: boolean }, { tx, envelope }) => {
        await effects.insert(tx, envelope.id, 'g', p.swallow ? 'swallowed' : 'x');
        if (p.swallow) await tx.query('SELECT 1 / 0').catch(() => undefined);
      });
      const messages = [{}, { swallow: true }, {}].map((payload) => wire({ type: 'order.created', payload }));
      const outcomes = await consumer.processor.process(items(messages));
      expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'recorded', 'handled']);
      expect((await effects.rows()).map((r) => r.note)).toEqual(['x', 'x']);
      const dead = await store.deadLetters.getDeadLetter(messages[1]!.id, 'g');
      expect(dead).toMatchObject({ status: 'pending', attempts: 1 });
      expect(dead?.lastError).toMatch(/25P02/);
      // Not in the inbox: its replay runs the handler again.
      expect((await consumer.processor.process(items([messages[1]!]))).map((o) => o.kind)).toEqual(['recorded']);
    });
  });

  it('store.transaction throws SURETY_TRANSACTION_ABORTED instead of reporting a rolled-back COMMIT as done', async () => {
    await withPgStore('hc_commit', undefined, async (store, effects) => {
      const attempt = store.transaction(async (tx) => {
        await effects.insert(tx, 'm1', 'g', 'x');
        await tx.query('SELECT 1 / 0').catch(() => undefined);
        return 'done';
      });
      await expect(attempt).rejects.toMatchObject({ code: 'SURETY_TRANSACTION_ABORTED' });
      expect(await effects.rows()).toEqual([]);
    });
  });
});

/**
 * A MySQL store with an effects table and a `locks` table of rows 1 and 2, and another transaction
 * that holds row 2 and has changed 2,000 rows, so InnoDB picks the consumer's as the deadlock victim.
 */
async function withDeadlockScene(
  label: string,
  test: (scene: { store: MysqlStore; other: PoolConnection; effects: Effects; locks: string }) => Promise<void>,
): Promise<void> {
  const f = await makeMysqlFixture(label);
  const other = await f.pool.getConnection();
  try {
    const effects = await effectsTable(f);
    const locks = `${f.prefix}locks`;
    const ballast = `${f.prefix}ballast`;
    await f.pool.query(`CREATE TABLE ${locks} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`);
    await f.pool.query(`INSERT INTO ${locks} VALUES (1, 0), (2, 0)`);
    await f.pool.query(`CREATE TABLE ${ballast} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`);
    await f.pool.query(
      `INSERT INTO ${ballast} SELECT seq, 0 FROM seq_1_to_2000`, // MariaDB's sequence engine
    );
    await other.query('START TRANSACTION');
    await other.query(`UPDATE ${ballast} SET v = v + 1`);
    await other.query(`UPDATE ${locks} SET v = 1 WHERE id = 2`);
    await test({ store: f.store, other, effects, locks });
  } finally {
    other.release();
    await f.pool.query(`DROP TABLE IF EXISTS ${f.prefix}locks, ${f.prefix}ballast, ${f.prefix}effects`);
    await f.teardown();
  }
}

describe('MySQL: a deadlock in the batch', () => {
  it('caught by a handler, sends nothing after it, so nothing commits outside the batch and no effect counts twice', async () => {
    await withDeadlockScene('hc_deadlock', async ({ store, other, effects, locks }) => {
      let deadlockErrno: number | undefined;
      let otherUpdate: Promise<unknown> | undefined;
      const caught = signal();
      const consumer = consumerOn(store, 2).on('order.created', async (p: { n: number }, { tx, envelope }) => {
        if (p.n === 0 && otherUpdate === undefined) {
          await tx.query(`UPDATE ${locks} SET v = 1 WHERE id = 1`);
          otherUpdate = other.query(`UPDATE ${locks} SET v = 2 WHERE id = 1`);
          // Each waits for the other's row: InnoDB rolls the consumer's whole transaction back.
          await tx.query(`UPDATE ${locks} SET v = 1 WHERE id = 2`).catch((err: { errno?: number }) => {
            deadlockErrno = err.errno;
          });
          caught.fire();
        }
        if (p.n === 1) await caught.fired; // still running once the transaction is gone
        await effects.insert(tx, envelope.id, 'g', String(p.n));
      });
      const messages = [0, 1, 2].map((n) => wire({ type: 'order.created', key: `k${n}`, payload: { n } }));
      const outcomes = await consumer.processor.process(items(messages));
      expect(deadlockErrno).toBe(1213);
      expect(outcomes.map((o) => o.kind)).toEqual(['handled', 'handled', 'handled']);
      await otherUpdate;
      await other.query('COMMIT');
      // Delivered again: the inbox has all three, and each effect is there once.
      expect((await consumer.processor.process(items(messages))).map((o) => o.kind)).toEqual([
        'duplicate',
        'duplicate',
        'duplicate',
      ]);
      expect((await effects.rows()).map((r) => r.note).sort()).toEqual(['0', '1', '2']);
    });
  });

  it('runs nothing another handler had queued behind the statement that deadlocked', async () => {
    await withDeadlockScene('hc_deadlock_queued', async ({ store, other, effects, locks }) => {
      let otherUpdate: Promise<unknown> | undefined;
      const blocking = signal();
      const consumer = consumerOn(store, 2).on('order.created', async (p: { n: number }, { tx, envelope }) => {
        if (p.n === 0 && otherUpdate === undefined) {
          await tx.query(`UPDATE ${locks} SET v = 1 WHERE id = 1`);
          otherUpdate = other.query(`UPDATE ${locks} SET v = 2 WHERE id = 1`);
          const deadlocks = tx.query(`UPDATE ${locks} SET v = 1 WHERE id = 2`);
          blocking.fire(); // the other handler's insert now queues behind this statement
          await deadlocks;
        }
        if (p.n === 1) await blocking.fired;
        await effects.insert(tx, envelope.id, 'g', String(p.n));
      });
      const messages = [0, 1, 2].map((n) => wire({ type: 'order.created', key: `k${n}`, payload: { n } }));
      const outcomes = await consumer.processor.process(items(messages));
      await otherUpdate;
      await other.query('COMMIT');
      // The batch ran again after the deadlock: each handled message's effect is there once (an insert
      // sent after the rollback would have committed on its own and counted twice), and nothing else.
      expect(outcomes.slice(1).map((o) => o.kind)).toEqual(['handled', 'handled']);
      const handled = outcomes.flatMap((o, n) => (o.kind === 'handled' ? [String(n)] : []));
      expect((await effects.rows()).map((r) => r.note).sort()).toEqual(handled);
    });
  });
});
