import type { DeadLetterStatus, Overview } from '../ports/admin-store.js';
import type { FromStore } from './lineage-merge.js';
import type { StoreAnswer, StoreUnavailable } from './store-fanout.js';

/** Every store's overview merged, plus each store's own. */
export interface MergedOverview extends Omit<Overview, 'deadLetterGroups' | 'dueRetries' | 'relays' | 'stoppedRelays'> {
  /** Largest count first; each group names its store. */
  readonly deadLetterGroups: FromStore<Overview['deadLetterGroups'][number]>[];
  /** Longest waiting first; each group names its store. */
  readonly dueRetries: FromStore<Overview['dueRetries'][number]>[];
  readonly relays: FromStore<Overview['relays'][number]>[];
  /** The latest stop first. */
  readonly stoppedRelays: FromStore<Overview['stoppedRelays'][number]>[];
  /** Each store that answered, in display order. */
  readonly stores: { readonly name: string; readonly overview: Overview }[];
  /** Stores left out of the sums. */
  readonly unavailable: StoreUnavailable[];
}

/**
 * Sums the counts, keeps the oldest pending time, adds throughput per minute and concatenates the
 * dead-letter groups, due retries and relays (tagged with their store). Stores that did not answer are listed
 * in `unavailable` and left out.
 */
export function mergeOverviews(answers: readonly StoreAnswer<Overview>[]): MergedOverview {
  const stores = answers.flatMap((a) => (a.ok ? [{ name: a.store, overview: a.value }] : []));
  const all = stores.map((s) => s.overview);
  const sum = (pick: (o: Overview) => number) => all.reduce((n, o) => n + pick(o), 0);
  const pending = all.map((o) => o.outbox.oldestPendingAt).filter((t): t is number => t !== null);

  const deadLetters = {} as Record<DeadLetterStatus, number>;
  for (const o of all) {
    for (const [status, n] of Object.entries(o.deadLetters) as [DeadLetterStatus, number][]) {
      deadLetters[status] = (deadLetters[status] ?? 0) + n;
    }
  }
  const minutes = new Map<number, { minute: number; sent: number; consumed: number }>();
  for (const o of all) {
    for (const t of o.throughput) {
      const bucket = minutes.get(t.minute) ?? { minute: t.minute, sent: 0, consumed: 0 };
      bucket.sent += t.sent;
      bucket.consumed += t.consumed;
      minutes.set(t.minute, bucket);
    }
  }

  return {
    outbox: {
      pending: sum((o) => o.outbox.pending),
      sent: sum((o) => o.outbox.sent),
      dead: sum((o) => o.outbox.dead),
      oldestPendingAt: pending.length ? Math.min(...pending) : null,
    },
    deadLetters,
    expiredLeases: sum((o) => o.expiredLeases),
    inboxSize: sum((o) => o.inboxSize),
    inboxSizeExact: all.every((o) => o.inboxSizeExact),
    throughput: [...minutes.values()].sort((a, b) => a.minute - b.minute),
    deadLetterGroups: stores
      .flatMap(({ name, overview }) => overview.deadLetterGroups.map((g) => ({ ...g, store: name })))
      .sort((a, b) => b.count - a.count),
    dueRetries: stores
      .flatMap(({ name, overview }) => overview.dueRetries.map((g) => ({ ...g, store: name })))
      .sort((a, b) => a.oldestDueAt - b.oldestDueAt),
    relays: stores.flatMap(({ name, overview }) => overview.relays.map((r) => ({ ...r, store: name }))),
    stoppedRelays: stores
      .flatMap(({ name, overview }) => overview.stoppedRelays.map((r) => ({ ...r, store: name })))
      .sort((a, b) => b.stoppedAt - a.stoppedAt),
    stores,
    unavailable: answers.flatMap((a) => (a.ok ? [] : [a.unavailable])),
  };
}
