/**
 * Admin reads must not starve the relay and consumers of the store's pool: the polled answers
 * (overview, readiness, doctor) are shared by concurrent callers and reused for a short window, and
 * reads on one store run at most `maxConcurrentReads` at a time. Time is an injected clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp, type AdminApp, type AdminAppOptions } from '../../src/admin/index.js';
import { runDoctor } from '../../src/admin/doctor/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { newToken } from '../support/admin-http.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock, waitFor } from '../support/wait.js';

/**
 * The real store, with every method call of the concerns the console reads counted; `hold` makes calls
 * of one method wait until released.
 */
function watched(store: AdminTestStore) {
  const calls = new Map<string, number>();
  const held = { method: '', running: 0, maxRunning: 0, release: () => {}, gate: Promise.resolve() };
  const watch = <T extends object>(concern: T): T =>
    new Proxy(concern, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const name = String(prop);
        return async (...args: unknown[]) => {
          calls.set(name, (calls.get(name) ?? 0) + 1);
          if (name !== held.method) return (value as (...a: unknown[]) => unknown).apply(target, args);
          held.running++;
          held.maxRunning = Math.max(held.maxRunning, held.running);
          try {
            await held.gate;
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            held.running--;
          }
        };
      },
    });
  const proxy: AdminTestStore = {
    ...store,
    admin: watch(store.admin),
    heartbeats: watch(store.heartbeats),
    inbox: watch(store.inbox),
  };
  return {
    store: proxy,
    count: (method: string) => calls.get(method) ?? 0,
    held,
    hold(method: string) {
      held.method = method;
      held.gate = new Promise<void>((resolve) => (held.release = resolve));
    },
  };
}

describe('shared and bounded admin reads (SQLite)', () => {
  const token = newToken('ops');
  const fixtures: StoreFixture[] = [];
  const apps: AdminApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const f of fixtures) await f.teardown().catch(() => undefined);
  });

  async function fixture(label: string) {
    const f = await storeFixtures.sqlite(label);
    fixtures.push(f);
    return watched(f.store as AdminTestStore);
  }
  function app(options: Partial<AdminAppOptions>) {
    const admin = createAdminApp({
      tokens: [{ name: 'ops', role: 'operator', token }],
      consoleDir: false,
      jobs: { enabled: false },
      ...options,
    } as AdminAppOptions);
    apps.push(admin);
    const get = async (path: string) => {
      const res = await admin.fetch(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${token}` } }));
      return { status: res.status, body: (await res.json().catch(() => undefined)) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    return { admin, get };
  }

  let one: Awaited<ReturnType<typeof fixture>>;
  const clock = new ManualClock(Date.now());
  let get: ReturnType<typeof app>['get'];
  const group = uniqueName('g');

  beforeAll(async () => {
    one = await fixture('cache_one');
    ({ get } = app({ store: one.store, clock }));
  });

  it('runs the store queries once for concurrent overview requests', async () => {
    await seedDeadLetters(one.store, 2, { group, status: 'dead' });
    const before = one.count('overview');
    const answers = await Promise.all([get('/api/overview'), get('/api/overview'), get('/api/overview')]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(one.count('overview')).toBe(before + 1);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect(answers[0]!.body.deadLetters.dead).toBe(2);
  });

  it('answers the overview from the cache for at most 2 s, then reads again', async () => {
    clock.advance(10_000);
    const first = await get('/api/overview');
    const reads = one.count('overview');
    await seedDeadLetters(one.store, 3, { group, status: 'dead' });

    clock.advance(1_999);
    const cached = await get('/api/overview');
    expect(one.count('overview')).toBe(reads);
    expect(cached.body.deadLetters.dead).toBe(first.body.deadLetters.dead);

    clock.advance(1);
    const fresh = await get('/api/overview');
    expect(one.count('overview')).toBe(reads + 1);
    expect(fresh.body.deadLetters.dead).toBe(first.body.deadLetters.dead + 3);
  });

  it('keeps the merged overview no older than 2 s, though each store was read earlier for the metrics', async () => {
    const a = await fixture('cache_a');
    const b = await fixture('cache_b');
    const merged = app({ stores: { a: a.store, b: b.store }, clock });
    clock.advance(10_000);
    // A scrape reads each store's overview; the overview at +1.5 s is merged from those reads.
    expect((await merged.admin.fetch(metricsRequest())).status).toBe(200);
    expect([a.count('overview'), b.count('overview')]).toEqual([1, 1]);
    clock.advance(1_500);
    const [x, y] = await Promise.all([merged.get('/api/overview'), merged.get('/api/overview')]);
    expect(y.body).toEqual(x.body);
    expect([a.count('overview'), b.count('overview')]).toEqual([1, 1]);
    await seedDeadLetters(b.store, 1, { group, status: 'dead' });
    // 2 s after the stores were read, the merged answer is too old, however recently it was merged.
    clock.advance(500);
    const fresh = await merged.get('/api/overview');
    expect([a.count('overview'), b.count('overview')]).toEqual([2, 2]);
    expect(fresh.body.deadLetters.dead).toBe(x.body.deadLetters.dead + 1);
  });

  function metricsRequest() {
    return new Request('http://x/metrics', { headers: { authorization: `Bearer ${token}` } });
  }

  it('answers readiness from a shared check for 1 s, then sees the database gone', async () => {
    const w = await fixture('cache_ready');
    const { admin } = app({ store: w.store, clock });
    const readyz = () => admin.fetch(new Request('http://x/readyz'));
    const statuses = await Promise.all([readyz(), readyz(), readyz()]);
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(w.count('relays')).toBe(1);
    await w.store.close(); // gone for real
    clock.advance(999);
    expect((await readyz()).status).toBe(200);
    expect(w.count('relays')).toBe(1);
    clock.advance(1);
    expect((await readyz()).status).toBe(503);
    expect(w.count('relays')).toBe(2);
  });

  it('runs the doctor once for concurrent requests and reuses its report for 5 s', async () => {
    let runs = 0;
    const { get: ask } = app({
      store: one.store,
      clock,
      doctor: async () => {
        runs++;
        return runDoctor({ store: one.store });
      },
    });
    clock.advance(10_000);
    const reports = await Promise.all([ask('/api/doctor'), ask('/api/doctor')]);
    expect(reports.map((r) => r.status)).toEqual([200, 200]);
    expect(runs).toBe(1);
    clock.advance(4_999);
    await ask('/api/doctor');
    expect(runs).toBe(1);
    clock.advance(1);
    await ask('/api/doctor');
    expect(runs).toBe(2);
  });

  it('runs at most maxConcurrentReads reads on a store at once; the others wait their turn', async () => {
    const w = await fixture('cache_limit');
    await seedDeadLetters(w.store, 1, { group, status: 'dead' });
    const { admin, get: read } = app({ store: w.store, clock, maxConcurrentReads: 2 });
    const limit = admin.stores.default.readLimit;
    w.hold('listDeadLetters');
    const pending = Array.from({ length: 6 }, () => read(`/api/dead-letters?group=${group}`));
    await waitFor('two reads running and four waiting', () => limit.running === 2 && limit.waiting === 4);
    expect(w.held.running).toBe(2);
    // An overview of the same store queues behind them too.
    clock.advance(10_000);
    const overview = read('/api/overview');
    await waitFor('the overview waiting as well', () => limit.waiting === 5);
    w.held.release();
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers[5]!.body.items).toHaveLength(1);
    expect((await overview).status).toBe(200);
    expect(w.held.maxRunning).toBe(2);
    expect([limit.running, limit.waiting]).toEqual([0, 0]);
  });

  it('validates the cache and limit options, naming them, with defaults', () => {
    const make = (o: object) => () => app({ store: one.store, ...o });
    expect(make({ cache: { overviewMs: -1 } })).toThrow(/admin\.cache\.overviewMs/);
    expect(make({ cache: { readinessMs: 120_000 } })).toThrow(/admin\.cache\.readinessMs/);
    expect(make({ cache: { doctorMS: 1 } })).toThrow(/admin\.cache/);
    expect(make({ maxConcurrentReads: 0 })).toThrow(/admin\.maxConcurrentReads/);
    expect(make({ trustProxy: 'yes' })).toThrow(/admin\.trustProxy/);
    const { admin } = app({ store: one.store, cache: { overviewMs: 0 } });
    expect(admin.stores.default.readLimit.max).toBe(2);
  });
});
