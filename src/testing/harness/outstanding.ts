import type { AdminStore } from '../../ports/admin-store.js';
import type { FaultyPublisher } from './faulty-publisher.js';
import type { FaultySubscriber } from './faulty-subscriber.js';

/** A consumer group as settled() checks it: the topics it reads, and whether a replay job retries its dead letters. */
export interface WatchedGroup {
  readonly group: string;
  readonly topics: readonly string[];
  readonly replays: boolean;
}

/** What settled() reads of the pipeline. */
export interface PipelineState {
  readonly admin: AdminStore;
  readonly now: () => number;
  readonly publisher: FaultyPublisher;
  readonly subscriber: FaultySubscriber;
  readonly groups: () => readonly WatchedGroup[];
  /** Messages of `topic` after the group's committed offset: appended to the log, not yet consumed. */
  readonly unconsumed: (group: string, topic: string) => Promise<number>;
}

const PAGE = 500;

/**
 * What still has to happen before the pipeline is at rest, one line each; empty when nothing is due.
 * Read in the direction messages travel (outbox, then the log, then dead letters): a message moving
 * on while this runs is then seen at its next stop, never missed between two reads.
 */
export async function outstanding(state: PipelineState): Promise<string[]> {
  const now = state.now();
  const lines: string[] = [];
  for await (const row of pages((before) => state.admin.listOutbox({ status: ['pending'] }, { limit: PAGE, before }))) {
    const what = `outbox row ${row.type} ${row.messageId} (key ${row.key}, ${row.attempts} failed attempts)`;
    if (row.claimedBy !== null && row.nextAttemptAt > now)
      lines.push(`${what}: claimed by relay ${row.claimedBy}, publishing`);
    else if (row.nextAttemptAt <= now) {
      const why = state.publisher.connectionDropped ? '; the connection is dropped: restore it' : '';
      lines.push(`${what}: due now${row.lastError ? `, last error: ${row.lastError}` : ''}${why}`);
    }
  }
  if (state.publisher.inFlight > 0) lines.push(`${state.publisher.inFlight} publish(es) awaiting the broker's confirm`);
  const groups = state.groups();
  for (const { group, topics } of groups) {
    for (const topic of topics) {
      const n = await state.unconsumed(group, topic);
      if (n > 0) lines.push(`group ${group}: ${n} message(s) of topic ${topic} not yet consumed`);
    }
  }
  if (state.subscriber.inHand > 0) lines.push(`${state.subscriber.inHand} delivery(ies) being handled`);
  for (const { group } of groups.filter((g) => g.replays)) {
    const dead = (before: number | undefined) =>
      state.admin.listDeadLetters({ status: ['pending', 'replaying'], group }, { limit: PAGE, before }, now);
    for await (const row of pages(dead)) {
      const what = `dead letter ${row.id} of group ${group} (${row.type} ${row.messageId}, ${row.attempts} attempts)`;
      if (row.status === 'replaying') lines.push(`${what}: being replayed`);
      else if (row.nextRetryAt !== null && row.nextRetryAt <= now)
        lines.push(`${what}: due for replay now, last error: ${row.lastError}`);
    }
  }
  return lines;
}

/** Every row of a keyset-paged list. */
export async function* pages<T>(
  page: (before: number | undefined) => Promise<{ items: T[]; nextBefore: number | null }>,
): AsyncGenerator<T> {
  let before: number | undefined;
  for (;;) {
    const { items, nextBefore } = await page(before);
    yield* items;
    if (nextBefore === null) return;
    before = nextBefore;
  }
}
