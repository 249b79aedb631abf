import type { RedisClient } from './driver.js';
import {
  autoClaimReply,
  claimReply,
  compareEntryIds,
  pendingEntries,
  readGroupEntries,
  type StreamEntry,
} from './stream-replies.js';

/** An entry to hand out, and how many times Redis has delivered it, this time included. */
export interface Received {
  readonly entry: StreamEntry & { readonly fields: readonly Buffer[] };
  readonly deliveries: number;
}

/** Where one consumer of one group reads. */
export interface GroupMember {
  readonly stream: string;
  readonly group: string;
  readonly consumer: string;
}

/** The delivery counts of `entries` in `member`'s pending list (XPENDING over their id range). */
export async function withDeliveryCounts(
  client: RedisClient,
  member: GroupMember,
  entries: readonly StreamEntry[],
): Promise<Received[]> {
  const live = entries.filter((e): e is Received['entry'] => e.fields !== null);
  if (live.length === 0) return [];
  const ids = live.map((e) => e.id).sort(compareEntryIds);
  const reply = await client.callBuffer(
    'XPENDING',
    member.stream,
    member.group,
    ids[0]!,
    ids[ids.length - 1]!,
    ids.length * 2 + 1_000, // the range may hold other entries of this consumer
    member.consumer,
  );
  const counts = new Map(pendingEntries(reply).map((p) => [p.id, p.deliveries]));
  // An entry missing from the list was acked meanwhile by a predecessor: count it as delivered once more.
  return live.map((entry) => ({ entry, deliveries: counts.get(entry.id) ?? 1 }));
}

/**
 * This consumer's own pending entries after `after` (`XREADGROUP ... <id>` reads the consumer's
 * history, not new entries): those whose delivery a lost connection swallowed, or a predecessor
 * of the same name left. `deleted` are pending ids whose entry trimming removed.
 */
export async function readOwnPending(
  client: RedisClient,
  member: GroupMember,
  after: string,
  count: number,
): Promise<{ entries: StreamEntry[]; deleted: string[]; last: string | undefined }> {
  const reply = await client.callBuffer(
    'XREADGROUP',
    'GROUP',
    member.group,
    member.consumer,
    'COUNT',
    count,
    'STREAMS',
    member.stream,
    after,
  );
  const entries = readGroupEntries(reply);
  return {
    entries: entries.filter((e) => e.fields !== null),
    deleted: entries.filter((e) => e.fields === null).map((e) => e.id),
    last: entries[entries.length - 1]?.id,
  };
}

/** `XAUTOCLAIM`: entries idle at least `idleMs` on any consumer become this consumer's. */
export async function claimIdle(
  client: RedisClient,
  member: GroupMember,
  idleMs: number,
  cursor: string,
  count: number,
): Promise<{ cursor: string; entries: StreamEntry[]; deleted: string[] }> {
  const reply = await client.callBuffer(
    'XAUTOCLAIM',
    member.stream,
    member.group,
    member.consumer,
    idleMs,
    cursor,
    'COUNT',
    count,
  );
  return autoClaimReply(member.stream, reply);
}

/** `XCLAIM` of one entry idle at least `idleMs`: it, delivered once more, or nothing when another took it. */
export async function claimOne(
  client: RedisClient,
  member: GroupMember,
  id: string,
  idleMs: number,
): Promise<StreamEntry | undefined> {
  const reply = await client.callBuffer('XCLAIM', member.stream, member.group, member.consumer, idleMs, id);
  return claimReply(member.stream, reply)[0];
}

/**
 * Resets the idle time of entries still being handled here (`XCLAIM ... JUSTID`, no delivery
 * counted), so that a handler slower than `claimIdleMs` does not see its entry claimed away;
 * with `idleMs` set instead, makes them claimable at once by any consumer (handing them back).
 */
export async function touchPending(
  client: RedisClient,
  member: GroupMember,
  ids: readonly string[],
  minIdleMs: number,
  idleMs?: number,
): Promise<void> {
  if (ids.length === 0) return;
  const idle = idleMs === undefined ? [] : ['IDLE', idleMs];
  await client.call('XCLAIM', member.stream, member.group, member.consumer, minIdleMs, ...ids, ...idle, 'JUSTID');
}
