import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { fetchBack, type FetchedState } from '../../src/consumer/fetch-back.js';
import type { VersionGuardKey } from '../../src/ports/consumer-store.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { wire } from '../support/consumer-env.js';
import { customersTable, type CustomersTable } from '../support/customers-table.js';
import { uniqueName } from '../support/env.js';
import { FetchBackChild } from '../support/fetch-back-child.js';
import { blockedOnLock } from '../support/lock-waits.js';
import { storeFixtures } from '../support/stores.js';

type Customer = { name: string };
const KEY = 'cust-1';
const state = (version: number) => ({ version, state: { name: `v${version}` } });
const notification = () => wire({ type: 'customer.changed', key: KEY, payload: {} });

for (const [dialect, makeStore] of Object.entries(storeFixtures)) {
  describe(`fetchBack (${dialect})`, () => {
    let f: StoreFixture;
    let store: ConsumerStore & StoreFixture['store'];
    let customers: CustomersTable;
    let group: string;
    let guard: VersionGuardKey;
    const children: FetchBackChild[] = [];

    beforeEach(async () => {
      f = await makeStore(`fb_${dialect}`);
      store = f.store;
      customers = customersTable(store);
      await customers.create();
      group = uniqueName('fb');
      guard = { group, scope: 'customers', key: KEY };
    });
    afterEach(async () => {
      for (const child of children.splice(0)) child.kill();
      await f.teardown();
    });

    /** A consumer process of the group on this store (its own connections), see fetch-back-process.ts. */
    const consumerProcess = async (currentVersion: boolean) => {
      const at = f as unknown as { schema?: string; prefix?: string; path?: string };
      const storeAt = dialect === 'postgres' ? at.schema! : dialect === 'mysql' ? at.prefix! : at.path!;
      const child = await FetchBackChild.start({ dialect: store.dialect, storeAt, group, currentVersion });
      children.push(child);
      return child;
    };

    /**
     * `first` fetches `firstVersion`, applies it and stays in its transaction; then `second`
     * fetches `secondVersion` and goes as far as it can: behind a lock of `first`'s transaction on
     * PostgreSQL and MariaDB, behind its write lock (BEGIN IMMEDIATE) on SQLite, before it can fetch.
     * Then `first` commits, and `second` after it.
     */
    const overlap = async (
      first: FetchBackChild,
      firstVersion: number,
      second: FetchBackChild,
      secondVersion: number,
    ) => {
      first.handle(notification(), { hold: true });
      await first.next('started');
      await first.answerFetch(state(firstVersion));
      expect(await first.next('applied')).toEqual({ kind: 'applied', version: firstVersion });
      second.handle(notification());
      if (dialect === 'sqlite') {
        first.release();
        const firstDone = await first.untilDone();
        await second.next('started');
        await second.answerFetch(state(secondVersion));
        return { first: firstDone, second: await second.untilDone() };
      }
      const { session } = await second.next('started');
      await second.answerFetch(state(secondVersion));
      await blockedOnLock(store, session!);
      first.release();
      const firstDone = await first.untilDone();
      return { first: firstDone, second: await second.untilDone() };
    };

    it('keeps v2 when two processes handle the first notifications of a new key and v1 commits last', async () => {
      const [a, b] = await Promise.all([consumerProcess(true), consumerProcess(true)]);
      const { first, second } = await overlap(a, 2, b, 1);
      expect(await customers.rows()).toEqual([{ id: KEY, name: 'v2', version: 2 }]);
      expect([first.done.outcomes, second.done.outcomes]).toEqual([[{ kind: 'handled' }], [{ kind: 'handled' }]]);
      expect(second.reports).toEqual([]); // v1 was never applied
      expect(await store.versionGuards.guardedVersion(guard)).toBe(2);
    });

    it('converges on v2 in the reverse order, and a duplicate changes nothing', async () => {
      // No currentVersion: the guard alone decides.
      const [a, b] = await Promise.all([consumerProcess(false), consumerProcess(false)]);
      const { second } = await overlap(a, 1, b, 2);
      expect(second.reports).toEqual([{ kind: 'applied', version: 2 }]);
      // A second notification of the same change, fetched again.
      a.handle(notification());
      await a.next('started');
      await a.answerFetch(state(2));
      const duplicate = await a.untilDone();
      expect(duplicate.reports).toEqual([]);
      expect(duplicate.done.outcomes).toEqual([{ kind: 'handled' }]);
      expect(await customers.rows()).toEqual([{ id: KEY, name: 'v2', version: 2 }]);
      expect(await store.versionGuards.guardedVersion(guard)).toBe(2);
    });

    /** A consumer of the group in this process, driven through its processor; `answer` is what fetch returns. */
    const inProcess = (answer: () => FetchedState<Customer>, apply?: () => void) => {
      const consumer = new Consumer({
        group,
        store,
        transport: { subscribe: async () => ({ close: async () => undefined }) },
        logger: silentLogger,
      }).on(
        'customer.changed',
        fetchBack<Customer>({
          scope: 'customers',
          fetch: async () => answer(),
          apply: async (tx, key, customer, version) => {
            await customers.upsert(tx, key, customer.name, version);
            apply?.();
          },
          remove: async (tx, key) => void (await customers.remove(tx, key)),
          currentVersion: customers.version,
        }),
      );
      return async (replay = false) => {
        const outcomes = await consumer.processor.process([
          { message: notification(), topic: 'customer.changed', replay },
        ]);
        return outcomes.map((o) => o.kind);
      };
    };

    it('leaves the guard where it was when the apply rolls back, so the same version applies later', async () => {
      let failing = true;
      const handle = inProcess(
        () => state(2),
        () => {
          if (failing) throw new Error('the write after the upsert failed');
        },
      );
      expect(await handle()).toEqual(['recorded']); // a dead letter; the upsert rolled back
      expect(await customers.rows()).toEqual([]);
      expect(await store.versionGuards.guardedVersion(guard)).toBeUndefined();
      failing = false;
      expect(await handle(true)).toEqual(['handled']);
      expect(await customers.rows()).toEqual([{ id: KEY, name: 'v2', version: 2 }]);
      expect(await store.versionGuards.guardedVersion(guard)).toBe(2);
    });

    it('removes on a deletion and never brings back a state older than the newest applied', async () => {
      let answer: FetchedState<Customer> = state(2);
      const handle = inProcess(() => answer);
      const rowsAfter = async (next: FetchedState<Customer>) => {
        answer = next;
        expect(await handle()).toEqual(['handled']);
        return customers.rows();
      };
      expect(await rowsAfter(state(2))).toEqual([{ id: KEY, name: 'v2', version: 2 }]);
      expect(await rowsAfter(null)).toEqual([]); // gone, no version: the guard stays at 2
      expect(await rowsAfter(state(2))).toEqual([]); // a stale answer from before the deletion
      expect(await rowsAfter(state(3))).toEqual([{ id: KEY, name: 'v3', version: 3 }]); // created again
      expect(await rowsAfter({ version: 4, deleted: true })).toEqual([]);
      expect(await rowsAfter(state(3))).toEqual([]);
      expect(await rowsAfter(state(4))).toEqual([]);
      expect(await rowsAfter(state(5))).toEqual([{ id: KEY, name: 'v5', version: 5 }]);
      expect(await store.versionGuards.guardedVersion(guard)).toBe(5);
    });
  });
}

describe('fetchBack options and answers', () => {
  it('names a bad option', () => {
    const apply = async () => undefined;
    expect(() => fetchBack({ apply } as never)).toThrow(/invalid option "fetchBack\.fetch": must be a function/);
    expect(() => fetchBack({ fetch: async () => null, apply, scope: '' })).toThrow(/"fetchBack\.scope"/);
    expect(() => fetchBack({ fetch: async () => null, apply, scope: 'x'.repeat(201) })).toThrow(/"fetchBack\.scope"/);
  });

  it('records a dead letter naming the fault when fetch answers no safe-integer version', async () => {
    const f = await storeFixtures.sqlite('fb_bad_version');
    try {
      const store = f.store;
      let answer: unknown = { version: 1.5, state: {} };
      const consumer = new Consumer({
        group: 'g',
        store,
        transport: { subscribe: async () => ({ close: async () => undefined }) },
        logger: silentLogger,
      }).on('customer.changed', fetchBack({ fetch: async () => answer as never, apply: async () => undefined }));
      const handle = async () => {
        const message = notification();
        const [outcome] = await consumer.processor.process([{ message, topic: 'customer.changed', replay: false }]);
        return outcome?.kind === 'recorded' ? outcome.error : outcome?.kind;
      };
      expect(await handle()).toMatch(/SURETY_INVALID_INPUT: .*must be a safe integer, got 1\.5/);
      answer = undefined;
      expect(await handle()).toMatch(/SURETY_INVALID_INPUT: fetchBack: fetch must return .* got undefined/);
    } finally {
      await f.teardown();
    }
  });
});
