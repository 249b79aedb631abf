import { InvalidOptionError } from '../../core/errors.js';
import type {
  AdminJob,
  AuditEntry,
  DeadLetterEvent,
  DeadLetterEventKind,
  JobKind,
  JobStatus,
  OutboxAttempt,
  Page,
  PageRequest,
  RelayHeartbeat,
  StoppedRelay,
} from '../../ports/admin-store.js';

/** Driver rows (BIGINT may arrive as string) mapped to the admin port's types. */

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : text(v));

/** Most rows one page may ask for. */
export const MAX_PAGE = 1_000;

/** Rejects a page the port does not allow, naming the field. */
export function checkPage(page: PageRequest): void {
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE) {
    throw new InvalidOptionError('limit', `must be an integer from 1 to ${MAX_PAGE}`);
  }
  if (page.before !== undefined && (!Number.isInteger(page.before) || page.before < 1)) {
    throw new InvalidOptionError('before', 'must be a positive integer (a previous page\'s "nextBefore")');
  }
}

/** A page from `limit + 1` rows fetched newest first: the extra row only says that more exist. */
export function toPage<T>(rows: T[], limit: number, idOf: (row: T) => number): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextBefore: rows.length > limit && last !== undefined ? idOf(last) : null };
}

export function toOutboxAttempt(r: Record<string, unknown>): OutboxAttempt {
  return {
    at: num(r.at),
    attempt: num(r.attempt),
    outcome: String(r.outcome) as OutboxAttempt['outcome'],
    error: textOrNull(r.error),
    actor: textOrNull(r.actor),
    confirmedAt: r.confirmed_at === null || r.confirmed_at === undefined ? null : num(r.confirmed_at),
  };
}

export function toDeadLetterEvent(r: Record<string, unknown>): DeadLetterEvent {
  return {
    at: num(r.at),
    kind: String(r.kind) as DeadLetterEventKind,
    attempt: num(r.attempt),
    detail: textOrNull(r.detail),
    actor: textOrNull(r.actor),
  };
}

export function toRelayHeartbeat(r: Record<string, unknown>): RelayHeartbeat {
  return {
    relayId: String(r.relay_id),
    host: String(r.host),
    pid: num(r.pid),
    startedAt: num(r.started_at),
    lastClaimedAt: numOrNull(r.last_claimed_at),
    lastSeenAt: num(r.last_seen_at),
  };
}

export function toStoppedRelay(r: Record<string, unknown>): StoppedRelay {
  return { ...toRelayHeartbeat(r), stoppedAt: num(r.stopped_at) };
}

export function toAuditEntry(r: Record<string, unknown>): AuditEntry {
  const detail = textOrNull(r.detail);
  return {
    id: num(r.id),
    at: num(r.at),
    actor: String(r.actor),
    role: String(r.role),
    action: String(r.action),
    target: String(r.target),
    reason: textOrNull(r.reason),
    outcome: String(r.outcome) as AuditEntry['outcome'],
    detail: detail === null ? null : (JSON.parse(detail) as Record<string, unknown>),
  };
}

export function toAdminJob(r: Record<string, unknown>): AdminJob {
  return {
    id: num(r.id),
    kind: String(r.kind) as JobKind,
    filter: JSON.parse(text(r.filter)) as AdminJob['filter'],
    reason: textOrNull(r.reason),
    actor: String(r.actor),
    status: String(r.status) as JobStatus,
    total: num(r.total),
    done: num(r.done),
    changed: num(r.changed),
    cursor: num(r.cursor_id),
    maxId: num(r.max_id),
    ratePerSecond: num(r.rate_per_second),
    owner: textOrNull(r.owner),
    leaseUntil: numOrNull(r.lease_until),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    error: textOrNull(r.error),
  };
}
