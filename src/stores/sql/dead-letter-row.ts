import type {
  DeadLetterRow,
  DeadLetterStatus,
  DeadLetterStore,
  FailureRecord,
  RetryDecision,
} from '../../ports/consumer-store.js';
import type { SqlDialect } from './sql-dialect.js';

/** Column list in the order every dialect's SELECT and RETURNING use. */
export const DEAD_LETTER_COLUMNS =
  'id, message_id, group_name, topic, type, msg_key, version, headers, body, body_encoding, status, attempts, next_retry_at, last_error, poison, ignored_reason, claimed_by, lease_until, created_at, updated_at';

/** DEAD_LETTER_COLUMNS qualified with a table alias, for statements that join or alias the table. */
export const deadLetterColumns = (alias: string) =>
  DEAD_LETTER_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

export const DEAD_LETTER_STATUSES: readonly DeadLetterStatus[] = [
  'pending',
  'replaying',
  'resolved',
  'ignored',
  'dead',
];

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

/** Maps a driver row (BIGINT may arrive as string, booleans as 0/1) to a {@link DeadLetterRow}. */
export function toDeadLetterRow(r: Record<string, unknown>): DeadLetterRow {
  return {
    id: num(r.id),
    messageId: String(r.message_id),
    group: String(r.group_name),
    topic: String(r.topic),
    type: String(r.type),
    key: String(r.msg_key),
    version: num(r.version),
    headers: JSON.parse(text(r.headers)) as Record<string, string>,
    body: text(r.body),
    bodyEncoding: String(r.body_encoding) as DeadLetterRow['bodyEncoding'],
    status: String(r.status) as DeadLetterStatus,
    attempts: num(r.attempts),
    nextRetryAt: numOrNull(r.next_retry_at),
    lastError: text(r.last_error),
    poison: r.poison === true || num(r.poison) === 1,
    ignoredReason: strOrNull(r.ignored_reason),
    claimedBy: strOrNull(r.claimed_by),
    leaseUntil: numOrNull(r.lease_until),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

/** Folds `SELECT status, count(*) AS n ... GROUP BY status` rows into a count per status, zeros included. */
export function countsFromRows(rows: Record<string, unknown>[]): Record<DeadLetterStatus, number> {
  const out = Object.fromEntries(DEAD_LETTER_STATUSES.map((s) => [s, 0])) as Record<DeadLetterStatus, number>;
  for (const r of rows) {
    const status = String(r.status) as DeadLetterStatus;
    if (status in out) out[status] = Number(r.n);
  }
  return out;
}

/** Argument shapes of the dead-letter port, named for the stores that implement it. */
export type ClaimDueRequest = Parameters<DeadLetterStore['claimDue']>[0];
export type RescheduleUpdate = Parameters<DeadLetterStore['reschedule']>[0];
export type DecideRetry = (attempts: number) => RetryDecision;

/**
 * A failure's columns in the order every dialect's upsert inserts them: message id, group, topic,
 * type, key, version, headers, body, body encoding, error, poison, now.
 */
export function failureValues(d: Pick<SqlDialect, 'bool'>, f: FailureRecord, error: string): unknown[] {
  const { messageId, group, topic, type, key, version, headers, body, bodyEncoding } = f;
  const identity = [messageId, group, topic, type, key, version];
  return [...identity, JSON.stringify(headers), body, bodyEncoding, error, d.bool(f.poison), f.now];
}
