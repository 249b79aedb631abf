import type { DeadLetterEvent, Lineage, OutboxAttempt } from '../ports/admin-store.js';
import type { DeadLetterRow } from '../ports/consumer-store.js';
import type { OutboxRow } from '../ports/outbox-store.js';
import { NotFoundError } from './admin-errors.js';
import type { StoreAnswer, StoreUnavailable } from './store-fanout.js';

/** An item of a merged answer, with the name of the store it came from. */
export type FromStore<T> = T & { readonly store: string };

/** A message's lineage across every store the console serves. */
export interface MergedLineage {
  readonly messageId: string;
  /** From the first store, in display order, that has the row. */
  readonly outbox: FromStore<OutboxRow & { readonly history: OutboxAttempt[] }> | null;
  readonly inbox: FromStore<{ readonly group: string; readonly recordedAt: number }>[];
  readonly deadLetters: FromStore<DeadLetterRow & { readonly history: DeadLetterEvent[] }>[];
  /** Stores that could not be asked; what they hold is missing above. */
  readonly unavailable: StoreUnavailable[];
}

/**
 * Merges each store's lineage of one message (in display order). Not found only when every store
 * answered and none knows the id: a store that could not be asked might.
 */
export function mergeLineage(messageId: string, answers: readonly StoreAnswer<Lineage | undefined>[]): MergedLineage {
  const unavailable = answers.flatMap((a) => (a.ok ? [] : [a.unavailable]));
  const known = answers.flatMap((a) => (a.ok && a.value ? [{ store: a.store, lineage: a.value }] : []));
  if (known.length === 0 && unavailable.length === 0) {
    throw new NotFoundError(`no outbox row, inbox record or dead letter knows message ${messageId}`);
  }
  const first = known.find((k) => k.lineage.outbox);
  return {
    messageId,
    outbox: first ? { ...first.lineage.outbox!, store: first.store } : null,
    inbox: known.flatMap(({ store, lineage }) => lineage.inbox.map((r) => ({ ...r, store }))),
    deadLetters: known.flatMap(({ store, lineage }) => lineage.deadLetters.map((d) => ({ ...d, store }))),
    unavailable,
  };
}
