import type { Envelope } from '../../core/envelope.js';
import { decodeEnvelope } from '../../core/wire.js';
import type { DeadLetterRow } from '../../ports/consumer-store.js';
import type { Store } from '../../ports/store.js';
import type { PublishedMessage } from './faulty-publisher.js';
import { pages } from './outstanding.js';

/** A message a consumer group handled: its inbox holds it (its effects committed). */
export interface HandledMessage<P = unknown> {
  readonly group: string;
  readonly envelope: Envelope<P>;
  /** When the inbox recorded it, on the harness clock. */
  readonly recordedAt: number;
}

/** A row of the dead-letter table, with its envelope decoded (null for a poison message). */
export interface DeadLetteredMessage<P = unknown> extends DeadLetterRow {
  readonly envelope: Envelope<P> | null;
}

/** The published messages that `groups`' inboxes hold, in publish order (each message once per group). */
export async function handledMessages(
  store: Store,
  published: readonly PublishedMessage[],
  groups: readonly string[],
): Promise<HandledMessage[]> {
  const seen = new Set<string>();
  const handled: HandledMessage[] = [];
  for (const { envelope } of published) {
    if (seen.has(envelope.id)) continue;
    seen.add(envelope.id);
    for (const group of groups) {
      const recordedAt = await store.inbox.inboxRecordedAt(envelope.id, group);
      if (recordedAt !== undefined) handled.push({ group, envelope, recordedAt });
    }
  }
  return handled;
}

/** Every dead letter (of `group`, or of all groups), oldest first, in any status as of `now`. */
export async function deadLetteredMessages(store: Store, now: number, group?: string): Promise<DeadLetteredMessage[]> {
  const rows: DeadLetteredMessage[] = [];
  const filter = group === undefined ? {} : { group };
  for await (const row of pages((before) => store.admin.listDeadLetters(filter, { limit: 500, before }, now)))
    rows.push({ ...row, envelope: decoded(row) });
  return rows.reverse();
}

function decoded(row: DeadLetterRow): Envelope | null {
  if (row.poison) return null;
  try {
    return decodeEnvelope({ id: row.messageId, headers: row.headers, body: Buffer.from(row.body, row.bodyEncoding) });
  } catch {
    return null;
  }
}
