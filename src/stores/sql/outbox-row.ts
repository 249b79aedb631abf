import type { NewOutboxRow, OutboxRow, OutboxStatus } from '../../ports/outbox-store.js';

/** Column list in the order every dialect's SELECT uses. */
export const OUTBOX_COLUMNS =
  'seq, message_id, type, msg_key, topic, ordering_key, version, headers, payload, traceparent, tracestate, created_at, status, attempts, next_attempt_at, claimed_by, last_error, sent_at';

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Maps a driver row (BIGINT may arrive as string, JSON as text or object) to an {@link OutboxRow}. */
export function toOutboxRow(r: Record<string, unknown>): OutboxRow {
  const headers =
    typeof r.headers === 'string'
      ? (JSON.parse(r.headers) as Record<string, string>)
      : (r.headers as Record<string, string>);
  return {
    seq: num(r.seq),
    messageId: String(r.message_id),
    type: String(r.type),
    key: String(r.msg_key),
    topic: String(r.topic),
    orderingKey: String(r.ordering_key),
    version: num(r.version),
    headers: headers ?? {},
    payload: Buffer.isBuffer(r.payload) ? r.payload.toString('utf8') : String(r.payload),
    traceparent: strOrNull(r.traceparent),
    tracestate: strOrNull(r.tracestate),
    createdAt: num(r.created_at),
    status: String(r.status) as OutboxStatus,
    attempts: num(r.attempts),
    nextAttemptAt: num(r.next_attempt_at),
    claimedBy: strOrNull(r.claimed_by),
    lastError: strOrNull(r.last_error),
    sentAt: numOrNull(r.sent_at),
  };
}

/** Error text stored in last_error is bounded so a huge stack never bloats a row. */
export function clipError(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1997)}...` : text;
}

/** The insert's values in column order, message_id through created_at (every store's insertOutbox). */
export function insertValues(row: NewOutboxRow, keySeq: number): unknown[] {
  return [
    row.messageId,
    row.type,
    row.key,
    row.topic,
    row.orderingKey,
    keySeq,
    row.version,
    JSON.stringify(row.headers),
    row.payload,
    row.traceparent,
    row.tracestate,
    row.createdAt,
  ];
}
