import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { OutboxRow } from '../../src/ports/outbox-store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { RelayOptions } from '../../src/producer/relay-options.js';
import { RetentionJob } from '../../src/producer/retention.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { testEnv } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock, waitFor } from '../support/wait.js';

type Rabbit = Awaited<ReturnType<typeof createRabbitMqTransport>>;

// Every store in the relay's default mode (PostgreSQL: locked claims, pipelined pool), and PostgreSQL with lease
// claims and on a plain pool too.
const variants: [name: string, tag: string, make: (typeof storeFixtures)['postgres'], mode: Partial<RelayOptions>][] = [
  ...Object.entries(storeFixtures).map(([dialect, make]): [string, string, typeof make, Partial<RelayOptions>] => [
    dialect,
    dialect,
    make,
    {},
  ]),
  ['postgres, lease claims', 'pglease', storeFixtures.postgres, { lockedClaims: false }],
  ['postgres, plain pool', 'pgplain', (label) => makePostgresFixture(label, { pipeline: false }), {}],
];

for (const [name, dialect, makeFixture, mode] of variants) {
  describe(`relay on ${name} with RabbitMQ`, () => {
    let f: StoreFixture;
    let probe: RabbitProbe;
    let transport: Rabbit;
    let relays: OutboxRelay[];

    beforeEach(async () => {
      f = await makeFixture(`relay_${dialect}`);
      probe = await RabbitProbe.open(`relay_${dialect}`);
      transport = await createRabbitMqTransport({
        url: testEnv.amqpUrl,
        exchange: probe.exchange,
        publishTimeoutMs: 5_000,
      });
      relays = [];
    });
    afterEach(async () => {
      for (const r of relays) await r.stop();
      await transport.close();
      await probe.close();
      await f.teardown();
    });

    const relay = (extra: Partial<RelayOptions> = {}) => {
      const r = new OutboxRelay({
        store: f.store,
        publisher: transport,
        logger: silentLogger,
        retention: false,
        pollIntervalMs: 50,
        ...mode,
        ...extra,
      });
      relays.push(r);
      return r;
    };
    const outbox = new Outbox({
      store: { outbox: { insert: (...a) => f.store.outbox.insert(...a) } },
    });
    const addCommitted = async (type: string, key?: string) => {
      const t = await f.begin();
      const res = await outbox.add(t.tx, { type, ...(key ? { key } : {}), payload: { type, key } });
      await t.commit();
      return res;
    };

    it('claims in the mode meant for this store', () => {
      expect(relay().locked).toBe(name === 'postgres' || name === 'postgres, plain pool'); // PostgreSQL's default
    });

    it('publishes committed messages, marks them sent on confirm, never publishes a rolled-back one', async () => {
      const queue = await probe.bindQueue('order.*');
      const a = await addCommitted('order.created', 'o-1');
      const dup = await addCommitted('order.created', 'o-1');
      expect(dup).toMatchObject({ duplicate: true, messageId: a.messageId });
      const t = await f.begin();
      const rolledBack = await outbox.add(t.tx, { type: 'order.created', key: 'o-2', payload: {} });
      await t.rollback();
      const b = await addCommitted('order.paid', 'o-1');
      expect(await relay().runOnce()).toBe(2);
      const ids = await probe.collect(queue, 2);
      expect(ids.sort()).toEqual([a.messageId, b.messageId].sort());
      expect(ids).not.toContain(rolledBack.messageId);
      expect((await f.store.outbox.get(a.messageId))?.status).toBe('sent');
      expect((await f.store.outbox.get(b.messageId))?.status).toBe('sent');
      expect(await f.store.outbox.stats()).toMatchObject({ pending: 0, sent: 2, dead: 0 });
    });

    it('publishes every row when transactions commit out of id order', async () => {
      if (!f.concurrentWriters) return; // SQLite has one writer: commits cannot interleave
      const queue = await probe.bindQueue('#');
      const r = relay();
      await r.start();
      const open = await Promise.all(Array.from({ length: 20 }, () => f.begin()));
      const ids: string[] = [];
      for (const t of open) ids.push((await outbox.add(t.tx, { type: 'order.created', payload: {} })).messageId);
      // Commit newest first: each commit lands below rows the relay may already have published.
      for (const t of [...open].reverse()) {
        await t.commit();
        r.wake();
      }
      const got = await probe.collect(queue, 20);
      expect(new Set(got)).toEqual(new Set(ids));
      await waitFor('all rows sent', async () => (await f.store.outbox.stats()).sent === 20);
    });

    it('never marks an unroutable message sent; it goes dead after the last attempt and the alert fires', async () => {
      await probe.bindQueue('order.*');
      const dead: OutboxRow[] = [];
      const errors: { obj: Record<string, unknown>; msg: string | undefined }[] = [];
      const logger = {
        ...silentLogger,
        error: (obj: object, msg?: string) => void errors.push({ obj: obj as Record<string, unknown>, msg }),
      };
      const r = relay({
        maxAttempts: 3,
        backoff: { schedule: [20], jitter: 0 },
        logger,
        onDead: (row) => void dead.push(row),
      });
      const { messageId } = await addCommitted('nobody.listens');
      await r.start();
      await waitFor('dead alert', () => dead.length === 1);
      const row = await f.store.outbox.get(messageId);
      expect(row).toMatchObject({ status: 'dead', attempts: 3, sentAt: null });
      expect(row?.lastError).toContain('SURETY_PUBLISH_UNROUTABLE');
      expect(dead[0]).toMatchObject({ messageId, status: 'dead' });
      const line = errors.find((e) => e.obj.messageId === messageId);
      expect(line?.msg).toMatch(/dead/);
      expect(String(line?.obj.reason)).toContain('SURETY_PUBLISH_UNROUTABLE');
      const metrics = await r.registry.metrics();
      expect(metrics).toMatch(/surety_relay_publish_attempts_total\{outcome="unroutable"\} 3/);
      expect(metrics).toMatch(/surety_relay_dead_total 1/);
      expect(metrics).toMatch(/surety_outbox_rows\{status="dead"\} 1/);
    });

    it('in ordered mode publishes each key in commit order, holding a key back while its head fails', async () => {
      const queue = await probe.bindQueue('ledger.#');
      const ordered = new Outbox({ store: f.store, ordered: true });
      const expected = new Map<string, string[]>();
      for (let i = 0; i < 15; i++) {
        const key = `acct-${i % 3}`;
        // The first entry of acct-0 goes to a topic nobody is bound to yet: it fails and is retried.
        const topic = i === 0 ? 'late.ledger' : 'ledger.entry';
        const res = await ordered.transaction((tx) =>
          ordered.add(tx, { type: 'ledger.entry', key: `e-${i}`, orderingKey: key, topic, payload: { i } }),
        );
        expected.set(key, [...(expected.get(key) ?? []), res.messageId]);
      }
      const head = expected.get('acct-0')![0]!;
      const r = relay({ ordered: true, maxInFlight: 100, backoff: { schedule: [100], jitter: 0 } });
      await r.start();
      const early = await probe.collect(queue, 10);
      await waitFor('the head to fail once', async () => ((await f.store.outbox.get(head))?.attempts ?? 0) >= 1);
      const beforeBinding = [...early, ...(await probe.drain(queue))];
      expect(new Set(beforeBinding)).toEqual(new Set([...expected.get('acct-1')!, ...expected.get('acct-2')!]));
      await probe.bind(queue, 'late.#');
      const got = [...beforeBinding, ...(await probe.collect(queue, 5))];
      const position = new Map(got.map((id, i) => [id, i]));
      for (const ids of expected.values()) {
        const seen = ids.map((id) => position.get(id)!);
        expect(seen).toEqual([...seen].sort((a, b) => a - b));
      }
    });

    it('keeps a nacked row pending and retries it until the broker takes it', async () => {
      // A classic queue that holds one message and rejects the rest: RabbitMQ nacks the overflow.
      const queue = await probe.bindQueue('stock.#', { 'x-max-length': 1, 'x-overflow': 'reject-publish' });
      const ids = [(await addCommitted('stock.reserved')).messageId, (await addCommitted('stock.reserved')).messageId];
      const r = relay({ backoff: { schedule: [50], jitter: 0 } });
      await r.runOnce();
      const rows = await Promise.all(ids.map((id) => f.store.outbox.get(id)));
      expect(rows.map((x) => x?.status).sort()).toEqual(['pending', 'sent']);
      const nacked = rows.find((x) => x?.status === 'pending')!;
      expect(nacked.attempts).toBe(1);
      expect(nacked.lastError).toContain('SURETY_PUBLISH_NACKED');
      await probe.drain(queue);
      await r.start();
      await waitFor(
        'nacked row sent on retry',
        async () => (await f.store.outbox.get(nacked.messageId))?.status === 'sent',
      );
      expect(await probe.collect(queue, 1)).toEqual([nacked.messageId]);
    });

    it('counts a publisher that throws instead of rejecting as a failed attempt of that row only', async () => {
      const queue = await probe.bindQueue('order.*');
      const broken = await addCommitted('order.broken');
      const fine = await addCommitted('order.created');
      const throwing = {
        isReady: () => transport.isReady(),
        waitUntilReady: (ms: number) => transport.waitUntilReady(ms),
        close: async () => undefined,
        publish: (out: Parameters<Rabbit['publish']>[0]) => {
          if (out.message.id === broken.messageId) throw new TypeError('bug in a publisher');
          return transport.publish(out);
        },
      };
      expect(await relay({ publisher: throwing }).runOnce()).toBe(2);
      expect(await probe.collect(queue, 1)).toEqual([fine.messageId]);
      expect(await f.store.outbox.get(fine.messageId)).toMatchObject({ status: 'sent' });
      expect(await f.store.outbox.get(broken.messageId)).toMatchObject({ status: 'pending', attempts: 1 });
      expect((await f.store.outbox.get(broken.messageId))?.lastError).toContain('bug in a publisher');
    });

    it('marks a confirmed row sent even when the onConfirmed hook and then the logger throw', async () => {
      const queue = await probe.bindQueue('order.*');
      const added = await addCommitted('order.created');
      const hooked: string[] = [];
      const r = relay({
        logger: {
          ...silentLogger,
          error: () => {
            throw new Error('logger down');
          },
        },
        onConfirmed: (row) => {
          hooked.push(row.messageId);
          throw new Error('hook failed');
        },
      });
      expect(await r.runOnce()).toBe(1);
      expect(hooked).toEqual([added.messageId]);
      expect(await f.store.outbox.get(added.messageId)).toMatchObject({ status: 'sent', attempts: 0 });
      expect(await probe.collect(queue, 1)).toEqual([added.messageId]);
    });

    it('records a failed publish as usual when every log line throws', async () => {
      const failing = await addCommitted('nobody.listens'); // no queue bound: returned as unroutable
      const broken = () => {
        throw new Error('log sink down');
      };
      const r = relay({ logger: { debug: broken, info: broken, warn: broken, error: broken } });
      expect(await r.runOnce()).toBe(1);
      expect(await f.store.outbox.get(failing.messageId)).toMatchObject({ status: 'pending', attempts: 1 });
    });

    it('marks a confirmed row sent when an async onConfirmed hook rejects, and does not crash', async () => {
      await probe.bindQueue('order.*');
      const added = await addCommitted('order.created');
      const logged: string[] = [];
      const r = relay({
        logger: { ...silentLogger, error: (_obj: object, msg?: string) => void logged.push(msg ?? '') },
        onConfirmed: async () => {
          await Promise.resolve();
          throw new Error('hook failed later');
        },
      });
      expect(await r.runOnce()).toBe(1);
      expect(await f.store.outbox.get(added.messageId)).toMatchObject({ status: 'sent' });
      await waitFor('the rejection logged', () => logged.includes('onConfirmed hook threw'));
    });

    it('stopped while it starts, leaves nothing running: its commit listener is ended, no heartbeat stays', async () => {
      if (!f.store.outbox.listenForCommits) return; // only a store that listens has a start that waits
      const gated = gateListen(f.store);
      const r = relay({ store: gated.store, heartbeatMs: 100 });
      const starting = r.start();
      await gated.reached; // subscribing
      const stopping = r.stop();
      gated.open();
      await Promise.all([starting, stopping]);
      expect(gated.counts()).toEqual({ listened: 1, unlistened: 1 });
      expect((await f.store.heartbeats.relays()).map((h) => h.relayId)).not.toContain(r.id);
    });

    it('started again after a stop that timed out, runs once: the first run is ended before the second begins', async () => {
      if (!f.store.outbox.listenForCommits) return;
      const gated = gateListen(f.store);
      const said: string[] = [];
      const logger = { ...silentLogger, info: (_obj: object, msg?: string) => void said.push(msg ?? '') };
      const r = relay({ store: gated.store, logger, heartbeatMs: 100, shutdownTimeoutMs: 100 });
      const first = r.start();
      await gated.reached;
      await r.stop(); // gives up waiting: the first start is still subscribing
      const second = r.start(); // waits for the first run to end
      gated.open();
      await Promise.all([first, second]);
      expect(gated.counts()).toEqual({ listened: 2, unlistened: 1 }); // the first run's listener ended, the second's live
      expect(said.filter((m) => m === 'outbox relay started')).toHaveLength(1); // the first run started nothing more
      await r.stop();
      expect(gated.counts()).toEqual({ listened: 2, unlistened: 2 });
    });

    it('does not let a failing row delay the others, and honours the backoff schedule', async () => {
      const queue = await probe.bindQueue('order.*');
      const clock = new ManualClock();
      const clocked = new Outbox({
        store: { outbox: { insert: (...a) => f.store.outbox.insert(...a) } },
        clock,
      });
      const t = await f.begin();
      const poison = await clocked.add(t.tx, { type: 'nobody.listens', payload: {} });
      const good: string[] = [];
      for (let i = 0; i < 30; i++)
        good.push((await clocked.add(t.tx, { type: 'order.created', payload: { i } })).messageId);
      await t.commit();
      const schedule = [1_000, 5_000, 30_000];
      const r = relay({ clock, maxAttempts: 4, backoff: { schedule, jitter: 0 } });
      expect(await r.runOnce()).toBe(31);
      expect(new Set(await probe.collect(queue, 30))).toEqual(new Set(good));
      for (let attempt = 1; attempt <= 3; attempt++) {
        const row = (await f.store.outbox.get(poison.messageId))!;
        expect(row).toMatchObject({
          status: 'pending',
          attempts: attempt,
          nextAttemptAt: clock.now() + schedule[attempt - 1]!,
        });
        clock.advance(schedule[attempt - 1]! - 1);
        expect(await r.runOnce()).toBe(0); // not due one millisecond early
        clock.advance(1);
        expect(await r.runOnce()).toBe(1);
      }
      expect(await f.store.outbox.get(poison.messageId)).toMatchObject({ status: 'dead', attempts: 4 });
    });

    it('retention deletes only sent rows older than the limit', async () => {
      await probe.bindQueue('#');
      const clock = new ManualClock();
      const clocked = new Outbox({
        store: { outbox: { insert: (...a) => f.store.outbox.insert(...a) } },
        clock,
      });
      const add = async (type: string) => {
        const t = await f.begin();
        const r = await clocked.add(t.tx, { type, payload: {} });
        await t.commit();
        return r.messageId;
      };
      const old = await add('order.created');
      const r = relay({ clock });
      await r.runOnce();
      clock.advance(60_000);
      const recent = await add('order.created');
      await r.runOnce();
      const unroutablePending = await add('nobody.listens');
      const job = new RetentionJob(
        f.store.outbox,
        'purger',
        clock,
        { sentMaxAgeMs: 30_000, intervalMs: 1_000, batchSize: 10 },
        silentLogger,
      );
      expect(await job.runOnce()).toBe(1);
      expect(await f.store.outbox.get(old)).toBeUndefined();
      expect((await f.store.outbox.get(recent))?.status).toBe('sent');
      expect((await f.store.outbox.get(unroutablePending))?.status).toBe('pending');
      expect(
        await new RetentionJob(
          f.store.outbox,
          'other',
          clock,
          { sentMaxAgeMs: 0, intervalMs: 1_000, batchSize: 10 },
          silentLogger,
        ).runOnce(),
      ).toBe(0);
    });

    it('retention keeps its lease through a pass longer than the lease, so no second relay purges meanwhile', async () => {
      for (let i = 0; i < 6; i++) await addCommitted('order.created');
      const clock = new ManualClock(Date.now());
      const claimed = await f.store.outbox.claim({
        owner: 'r',
        limit: 10,
        now: clock.now(),
        leaseMs: 60_000,
        ordered: false,
      });
      expect(claimed).toHaveLength(6);
      await f.store.outbox.markSent(
        claimed.map((c) => c.seq),
        clock.now(),
      );
      clock.advance(60_000);
      const options = { sentMaxAgeMs: 1_000, intervalMs: 1_000, batchSize: 1 }; // lease: 30 s
      const other = new RetentionJob(f.store.outbox, 'b', clock, options, silentLogger);
      let batches = 0;
      let otherPurged: number | undefined;
      // Each batch takes 20 s of the clock: none outlasts the lease, the pass does.
      const slow = Object.create(f.store.outbox) as typeof f.store.outbox;
      slow.purgeSent = async (before, limit) => {
        const n = await f.store.outbox.purgeSent(before, limit);
        clock.advance(20_000);
        if (++batches === 3) otherPurged = await other.runOnce();
        return n;
      };
      expect(await new RetentionJob(slow, 'a', clock, options, silentLogger).runOnce()).toBe(6);
      expect(otherPurged).toBe(0);
    });

    it('claims a commit heard while a claim runs at once, not behind that claim', async () => {
      await probe.bindQueue('#');
      const first = await addCommitted('order.created');
      const slow = holdFirstClaim(f.store);
      const producer = new Outbox({ store: f.store });
      const confirmed: string[] = [];
      // No poll: only the commit's wake-up can get the second row claimed.
      const r = relay({
        store: slow.store,
        outbox: producer,
        pollIntervalMs: 600_000,
        onConfirmed: (row) => confirmed.push(row.messageId),
      });
      await r.start();
      try {
        await slow.holding;
        // Committed outside outbox.transaction, so the row is claimed, not handed to the relay.
        const second = await f.store.transaction((tx) => producer.add(tx, { type: 'order.created', payload: {} }));
        producer.committed();
        await waitFor(
          'the second row confirmed while the first claim is held',
          () => confirmed.includes(second.messageId),
          10_000,
        );
        expect(confirmed).toEqual([second.messageId]);
      } finally {
        slow.release();
      }
      await waitFor('the held row confirmed', () => confirmed.includes(first.messageId));
    });

    it('keeps at most maxInFlight publishes unconfirmed and claims more as they settle, without the poll', async () => {
      await probe.bindQueue('#');
      for (let i = 0; i < 25; i++) await addCommitted('order.created');
      let unconfirmed = 0;
      let most = 0;
      const counting = {
        isReady: () => transport.isReady(),
        waitUntilReady: (ms: number) => transport.waitUntilReady(ms),
        close: async () => undefined,
        publish: (out: Parameters<Rabbit['publish']>[0]) => {
          most = Math.max(most, ++unconfirmed);
          return transport.publish(out).finally(() => unconfirmed--);
        },
      };
      let confirmed = 0;
      // No poll, and room for far more batches than fit in flight: only rows leaving flight get more claimed.
      const r = relay({
        publisher: counting,
        maxInFlight: 4,
        batchSize: 10,
        maxLockedBatches: 64,
        pollIntervalMs: 600_000,
        onConfirmed: () => confirmed++,
      });
      await r.start();
      await waitFor('all 25 rows confirmed', () => confirmed === 25, 10_000);
      expect(most).toBe(4);
    });

    it('claims a commit at once while small locked batches take every slot, with leases', async () => {
      await probe.bindQueue('#');
      const first = await addCommitted('order.created');
      let held: (() => void) | undefined;
      const holding = new Promise<void>((resolve) => (held = resolve));
      let hold = true;
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      // The first publish waits until released: its batch keeps the only slot.
      const gated = {
        isReady: () => transport.isReady(),
        waitUntilReady: (ms: number) => transport.waitUntilReady(ms),
        close: async () => undefined,
        publish: async (out: Parameters<Rabbit['publish']>[0]) => {
          if (hold) {
            hold = false;
            held!();
            await released;
          }
          return transport.publish(out);
        },
      };
      const producer = new Outbox({ store: f.store });
      const confirmed: string[] = [];
      const r = relay({
        publisher: gated,
        outbox: producer,
        maxLockedBatches: 1,
        pollIntervalMs: 600_000,
        onConfirmed: (row) => confirmed.push(row.messageId),
      });
      await r.start();
      try {
        await holding;
        const second = await producer.transaction((tx) => producer.add(tx, { type: 'order.created', payload: {} }));
        await waitFor('the second row confirmed while the first batch holds the slot', () =>
          confirmed.includes(second.messageId),
        );
        expect(confirmed).toEqual([second.messageId]);
      } finally {
        release();
      }
      await waitFor('the held row confirmed', () => confirmed.includes(first.messageId));
      await waitFor('both marked sent', async () => (await f.store.outbox.stats()).sent === 2);
    });

    it('stops within shutdownTimeoutMs while its claim waits on a locked table, and lets the claim go after', async () => {
      if (!name.startsWith('postgres')) return; // a table lock held by another connection, as PostgreSQL takes it
      await addCommitted('order.created');
      const locker = await f.begin();
      await locker.tx.query(`LOCK TABLE ${f.store.tables.outbox} IN ACCESS EXCLUSIVE MODE`);
      const r = relay({ shutdownTimeoutMs: 300 });
      try {
        await r.start();
        await waitFor('the claim under way', () => r.lastClaimedAt !== null);
        const outcome = await Promise.race([
          r.stop().then(() => 'stopped'),
          new Promise((resolve) => setTimeout(() => resolve('still waiting'), 10_000)),
        ]);
        expect(outcome).toBe('stopped');
      } finally {
        await locker.rollback();
      }
      // The claim ends once the lock is gone, and lets its row go: another relay publishes it.
      const next = relay();
      await waitFor('the row let go and published by another relay', async () => (await next.runOnce()) === 1);
    });

    it('stops gracefully: in-flight publishes settle and nothing stays claimed', async () => {
      const queue = await probe.bindQueue('#');
      for (let i = 0; i < 300; i++) await addCommitted('order.created');
      const r = relay({ batchSize: 100 });
      await r.start();
      await waitFor('some rows sent', async () => (await f.store.outbox.stats()).sent > 0);
      await r.stop();
      const stats = await f.store.outbox.stats();
      const delivered = new Set(await probe.drain(queue));
      expect(delivered.size).toBeGreaterThanOrEqual(stats.sent);
      const rest = await relay().runOnce();
      expect(rest + stats.sent).toBe(300);
    });
  });
}

/**
 * The store, but its first claim that takes rows answers only on `release()`: a claim slowed on its way
 * back, as by a loaded database. Every other call goes straight through.
 */
function holdFirstClaim(store: StoreFixture['store']) {
  let reached!: () => void;
  let release!: () => void;
  const holding = new Promise<void>((r) => (reached = r));
  const released = new Promise<void>((r) => (release = r));
  let held = false;
  const hold =
    (claim: (...args: unknown[]) => Promise<OutboxRow[] | { rows: OutboxRow[] }>) =>
    async (...args: unknown[]) => {
      const result = await claim(...args);
      const count = Array.isArray(result) ? result.length : result.rows.length;
      if (!held && count > 0) {
        held = true;
        reached();
        await released;
      }
      return result;
    };
  const slow = new Proxy(store.outbox, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      return prop === 'claim' || prop === 'claimLocked' ? hold(bound as never) : bound;
    },
  });
  return { store: { ...store, outbox: slow }, holding, release };
}

/**
 * The store, but `listenForCommits` subscribes only once `open()` is called (`reached` resolves when it is
 * called); counts subscriptions and their ends.
 */
function gateListen(store: StoreFixture['store']) {
  let listened = 0;
  let unlistened = 0;
  let open!: () => void;
  let reach!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  const gated = new Proxy(store.outbox, {
    get(target, prop, receiver) {
      if (prop !== 'listenForCommits') {
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: Parameters<NonNullable<typeof target.listenForCommits>>) => {
        reach();
        await gate;
        const end = await target.listenForCommits!(...args);
        listened++;
        return async () => {
          unlistened++;
          await end();
        };
      };
    },
  });
  return { store: { ...store, outbox: gated }, open, reached, counts: () => ({ listened, unlistened }) };
}
