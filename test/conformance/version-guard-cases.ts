/**
 * The version-guard part of the consumer store conformance suite (runConsumerStoreConformance runs
 * it for every store): raises only upward, per (group, scope, key), undone by a rollback, and
 * compared with what committed when two transactions raise the same guard at once.
 */
import { describe, expect, it } from 'vitest';
import type { VersionGuardKey } from '../../src/ports/consumer-store.js';
import { blockedOnLock, sessionId } from '../support/lock-waits.js';
import type { TransactionFixture } from './transaction-cases.js';

/** A transaction `close` rolls back unless the test ended it: a failed assertion must not leave it holding locks. */
async function open(f: TransactionFixture) {
  const t = await f.begin();
  let ended = false;
  const end = (how: () => Promise<void>) => ((ended = true), how());
  return {
    tx: t.tx,
    commit: () => end(() => t.commit()),
    rollback: () => end(() => t.rollback()),
    close: async () => {
      if (!ended) await end(() => t.rollback()).catch(() => undefined);
    },
  };
}

const guard = (key = 'cust-1', scope = 'customers', group = 'billing'): VersionGuardKey => ({ group, scope, key });

export function versionGuardCases(fixture: () => TransactionFixture): void {
  describe('version guards', () => {
    const raise = (version: number, g = guard()) => {
      const { store } = fixture();
      return store.transaction((tx) => store.versionGuards.raiseVersion(tx, g, version));
    };
    const guarded = (g = guard()) => fixture().store.versionGuards.guardedVersion(g);

    it('raises a guard only upward, one guard per group, scope and key', async () => {
      expect(await guarded()).toBeUndefined();
      expect(await raise(2)).toBe(true); // the first write: no row yet
      expect(await raise(1)).toBe(false);
      expect(await raise(2)).toBe(false); // a duplicate
      expect(await raise(3)).toBe(true);
      expect(await guarded()).toBe(3);
      for (const other of [
        guard('cust-2'),
        guard('CUST-1'),
        guard('cust-1', 'orders'),
        guard('cust-1', 'customers', 'x'),
      ]) {
        expect(await raise(1, other)).toBe(true);
        expect(await guarded(other)).toBe(1);
      }
      expect(await guarded()).toBe(3);
      // Any safe integer: versions that are timestamps in microseconds, or negative.
      const wide = guard('wide');
      expect(await raise(Number.MIN_SAFE_INTEGER, wide)).toBe(true);
      expect(await raise(-5, wide)).toBe(true);
      expect(await raise(Number.MAX_SAFE_INTEGER, wide)).toBe(true);
      expect(await raise(Number.MAX_SAFE_INTEGER - 1, wide)).toBe(false);
      expect(await guarded(wide)).toBe(Number.MAX_SAFE_INTEGER);
    });

    it('sees its own transaction raise, and a rollback undoes it', async () => {
      const { store } = fixture();
      const t = await open(fixture());
      expect(await store.versionGuards.raiseVersion(t.tx, guard(), 5)).toBe(true);
      expect(await store.versionGuards.raiseVersion(t.tx, guard(), 5)).toBe(false);
      expect(await store.versionGuards.raiseVersion(t.tx, guard(), 6)).toBe(true);
      await t.rollback();
      expect(await guarded()).toBeUndefined();
      expect(await raise(2)).toBe(true);
      const u = await open(fixture());
      expect(await store.versionGuards.raiseVersion(u.tx, guard(), 7)).toBe(true);
      await u.rollback();
      expect(await guarded()).toBe(2);
      expect(await raise(3)).toBe(true);
    });

    it('makes a concurrent first raise wait, then compare with the version that committed', async () => {
      const f = fixture();
      if (!f.concurrentWriters) return; // one writer at a time: the second transaction starts after the first ends
      for (const [first, second, raised] of [
        [2, 1, false], // the older one commits last: it must not pass
        [2, 2, false],
        [1, 2, true],
      ] as const) {
        const g = guard(`first-${first}-${second}`);
        const a = await open(f);
        const b = await open(f);
        try {
          expect(await f.store.versionGuards.raiseVersion(a.tx, g, first)).toBe(true);
          const id = await sessionId(f.store.dialect, b.tx);
          const pending = f.store.versionGuards.raiseVersion(b.tx, g, second);
          await blockedOnLock(f.store, id);
          await a.commit();
          expect(await pending).toBe(raised);
          await b.commit();
        } finally {
          await a.close();
          await b.close();
        }
        expect(await f.store.versionGuards.guardedVersion(g)).toBe(Math.max(first, second));
      }
    });

    it('lets the waiting raise insert when the first writer rolls back', async () => {
      const f = fixture();
      if (!f.concurrentWriters) return;
      const a = await open(f);
      const b = await open(f);
      try {
        expect(await f.store.versionGuards.raiseVersion(a.tx, guard(), 5)).toBe(true);
        const id = await sessionId(f.store.dialect, b.tx);
        const pending = f.store.versionGuards.raiseVersion(b.tx, guard(), 3);
        await blockedOnLock(f.store, id);
        await a.rollback();
        expect(await pending).toBe(true);
        await b.commit();
      } finally {
        await a.close();
        await b.close();
      }
      expect(await guarded()).toBe(3);
    });
  });
}
