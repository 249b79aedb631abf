/*
 * Readers of the RESP2 replies of the stream commands, called with `callBuffer` so that entry
 * fields stay Buffers. Shapes the server would not send throw: they mean a protocol mismatch.
 */

/** One stream entry; `fields` is null for an entry in a pending list that trimming deleted. */
export interface StreamEntry {
  readonly stream: string;
  readonly id: string;
  readonly fields: readonly Buffer[] | null;
}

/** One entry of `XPENDING key group start end count [consumer]`. */
export interface PendingEntry {
  readonly id: string;
  readonly consumer: string;
  readonly idleMs: number;
  readonly deliveries: number;
}

const text = (value: unknown): string => {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new Error(`unexpected Redis reply element ${JSON.stringify(value)}`);
};

const list = (value: unknown): unknown[] => {
  if (Array.isArray(value)) return value;
  throw new Error(`expected a Redis array reply, got ${JSON.stringify(value)}`);
};

function entriesOf(stream: string, value: unknown): StreamEntry[] {
  return list(value).map((item) => {
    const [id, fields] = list(item);
    return { stream, id: text(id), fields: fields === null ? null : (list(fields) as Buffer[]) };
  });
}

/** `XREADGROUP ... STREAMS s1 s2 ...`: null when nothing arrived within BLOCK. */
export function readGroupEntries(reply: unknown): StreamEntry[] {
  if (reply === null) return [];
  return list(reply).flatMap((perStream) => {
    const [stream, entries] = list(perStream);
    return entriesOf(text(stream), entries);
  });
}

/** `XAUTOCLAIM`: the next cursor, the claimed entries, and ids trimming deleted while pending (Redis 7). */
export function autoClaimReply(
  stream: string,
  reply: unknown,
): { cursor: string; entries: StreamEntry[]; deleted: string[] } {
  const [cursor, entries, deleted] = list(reply);
  return {
    cursor: text(cursor),
    entries: entriesOf(stream, entries),
    deleted: deleted === undefined ? [] : list(deleted).map(text),
  };
}

/** `XCLAIM` without JUSTID: the entries it claimed. */
export function claimReply(stream: string, reply: unknown): StreamEntry[] {
  return entriesOf(stream, reply).filter((e) => e.fields !== null);
}

/** The extended form of `XPENDING`. */
export function pendingEntries(reply: unknown): PendingEntry[] {
  return list(reply).map((item) => {
    const [id, consumer, idle, deliveries] = list(item);
    return { id: text(id), consumer: text(consumer), idleMs: Number(idle), deliveries: Number(deliveries) };
  });
}

/** `XINFO GROUPS` / `XINFO CONSUMERS` / `XINFO STREAM`: flat name-value lists to objects. */
export function infoRecord(reply: unknown): Record<string, unknown> {
  const flat = list(reply);
  const record: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const value = flat[i + 1];
    record[text(flat[i])] = Buffer.isBuffer(value) ? value.toString('utf8') : value;
  }
  return record;
}

/** Orders stream entry ids (`<ms>-<seq>`) numerically. */
export function compareEntryIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}
