import type {
  AdminJob,
  AuditEntry,
  AuditFilter,
  DeadLetterEvent,
  DeadLetterFilter,
  Lineage,
  OutboxFilter,
  Overview,
  Page,
  PageRequest,
  RelayHeartbeat,
} from '../../ports/admin-store.js';
import type { DeadLetterRow } from '../../ports/consumer-store.js';
import type { OutboxRow } from '../../ports/outbox-store.js';
import { run, type AdminContext } from './admin-context.js';
import {
  checkPage,
  toAdminJob,
  toAuditEntry,
  toDeadLetterEvent,
  toOutboxAttempt,
  toPage,
  toRelayHeartbeat,
  toStoppedRelay,
} from './admin-rows.js';
import * as sql from './admin-sql.js';
import { countsFromRows, toDeadLetterRow } from './dead-letter-row.js';
import { toOutboxRow } from './outbox-row.js';
import { statsFromRows } from './stats.js';

/** The overview counts inbox rows exactly up to this many, then reports "at least". */
export const INBOX_COUNT_CAP = 100_000;

/** What operators read: lists, lineage, overview, heartbeats, audit and jobs. Same for every dialect. */

const MINUTE = 60_000;
/** Error groups the overview shows; the long tail stays in the list view. */
const DEAD_LETTER_GROUPS = 50;
/** Consumer groups with due retries the overview shows, longest waiting first. */
const DUE_GROUPS = 50;
/** Stopped relays an overview lists: the doctor needs only the latest. */
const STOPPED_RELAYS = 5;

export async function listOutbox(ctx: AdminContext, f: OutboxFilter, page: PageRequest): Promise<Page<OutboxRow>> {
  checkPage(page);
  const { rows } = await run(ctx.db, sql.listOutbox(ctx.sql.adminDialect, ctx.t, f, page));
  return toPage(rows.map(toOutboxRow), page.limit, (r) => r.seq);
}

// Dead letters read with their status as of `now` (see dead-letter-status.ts).

export async function listDeadLetters(
  ctx: AdminContext,
  f: DeadLetterFilter,
  page: PageRequest,
  now: number,
): Promise<Page<DeadLetterRow>> {
  checkPage(page);
  const { rows } = await run(ctx.db, sql.listDeadLetters(ctx.sql.adminDialect, ctx.t, f, page, now));
  return toPage(rows.map(toDeadLetterRow), page.limit, (r) => r.id);
}

export async function getDeadLetterById(
  ctx: AdminContext,
  id: number,
  now: number,
): Promise<DeadLetterRow | undefined> {
  const { rows } = await run(ctx.db, sql.selectDeadLetterById(ctx.sql.adminDialect, ctx.t, id, now));
  return rows[0] ? toDeadLetterRow(rows[0]) : undefined;
}

export async function lineage(ctx: AdminContext, messageId: string, now: number): Promise<Lineage | undefined> {
  const { db, t } = ctx;
  const d = ctx.sql.adminDialect;
  const inOutbox = d.isOutboxMessageId(messageId);
  const none = { rows: [] as Record<string, unknown>[], rowCount: 0 };
  const [outbox, attempts, inbox, deadLetters, events] = await Promise.all([
    inOutbox ? run(db, sql.selectOutboxByMessageId(d, t, messageId)) : none,
    inOutbox ? run(db, sql.selectOutboxAttempts(d, t, messageId)) : none,
    run(db, sql.selectInboxByMessageId(d, t, messageId)),
    run(db, sql.selectDeadLettersByMessageId(d, t, messageId, now)),
    run(db, sql.selectDeadLetterEvents(d, t, messageId)),
  ]);
  if (outbox.rows.length === 0 && inbox.rows.length === 0 && deadLetters.rows.length === 0) return undefined;
  const history = new Map<number, DeadLetterEvent[]>();
  for (const r of events.rows) {
    const id = Number(r.dead_letter_id);
    history.set(id, [...(history.get(id) ?? []), toDeadLetterEvent(r)]);
  }
  return {
    messageId,
    outbox: outbox.rows[0] ? { ...toOutboxRow(outbox.rows[0]), history: attempts.rows.map(toOutboxAttempt) } : null,
    inbox: inbox.rows.map((r) => ({ group: String(r.group_name), recordedAt: Number(r.recorded_at) })),
    deadLetters: deadLetters.rows.map((r) => {
      const row = toDeadLetterRow(r);
      return { ...row, history: history.get(row.id) ?? [] };
    }),
  };
}

export async function overview(ctx: AdminContext, now: number): Promise<Overview> {
  const { db, t } = ctx;
  const d = ctx.sql.adminDialect;
  const currentMinute = Math.floor(now / MINUTE) * MINUTE;
  const since = currentMinute - 59 * MINUTE;
  // One query at a time: the overview shares the store's small pool with the relay and consumers.
  const stats = await run(db, sql.outboxStats(t));
  const counts = await run(db, sql.deadLetterCounts(d, t, now));
  const expired = await run(db, sql.countExpiredLeases(d, t, now));
  const due = await run(db, sql.dueRetryGroups(d, t, now, DUE_GROUPS));
  const inbox = await run(db, sql.countInbox(t, INBOX_COUNT_CAP + 1));
  const sent = await run(db, ctx.sql.sentPerMinute(t, since));
  const consumed = await run(db, ctx.sql.consumedPerMinute(t, since));
  const groups = await run(db, ctx.sql.deadLetterGroups(t, DEAD_LETTER_GROUPS));
  const heartbeats = await relays(ctx);
  const stopped = await run(db, sql.selectStoppedRelays(d, t, STOPPED_RELAYS));
  const perMinute = (rows: Record<string, unknown>[]) => new Map(rows.map((r) => [Number(r.minute), Number(r.n)]));
  const sentBy = perMinute(sent.rows);
  const consumedBy = perMinute(consumed.rows);
  return {
    outbox: statsFromRows(stats.rows),
    deadLetters: countsFromRows(counts.rows),
    expiredLeases: Number(expired.rows[0]?.n ?? 0),
    dueRetries: due.rows.map((r) => ({
      group: String(r.group_name),
      count: Number(r.n),
      expiredLeases: Number(r.expired),
      oldestDueAt: Number(r.oldest),
    })),
    inboxSize: Math.min(Number(inbox.rows[0]?.n ?? 0), INBOX_COUNT_CAP),
    inboxSizeExact: Number(inbox.rows[0]?.n ?? 0) <= INBOX_COUNT_CAP,
    throughput: Array.from({ length: 60 }, (_, i) => {
      const minute = since + i * MINUTE;
      return { minute, sent: sentBy.get(minute) ?? 0, consumed: consumedBy.get(minute) ?? 0 };
    }),
    deadLetterGroups: groups.rows.map((r) => ({
      type: String(r.type),
      group: String(r.group_name),
      error: Buffer.isBuffer(r.error) ? r.error.toString('utf8') : String(r.error),
      count: Number(r.n),
      oldestAt: Number(r.oldest),
    })),
    relays: heartbeats,
    stoppedRelays: stopped.rows.map(toStoppedRelay),
  };
}

export async function relays(ctx: AdminContext): Promise<RelayHeartbeat[]> {
  return (await run(ctx.db, sql.selectRelays(ctx.t))).rows.map(toRelayHeartbeat);
}

export async function listAudit(ctx: AdminContext, f: AuditFilter, page: PageRequest): Promise<Page<AuditEntry>> {
  checkPage(page);
  const { rows } = await run(ctx.db, sql.listAudit(ctx.sql.adminDialect, ctx.t, f, page));
  return toPage(rows.map(toAuditEntry), page.limit, (e) => e.id);
}

export async function getJob(ctx: AdminContext, id: number): Promise<AdminJob | undefined> {
  const { rows } = await run(ctx.db, sql.selectJob(ctx.sql.adminDialect, ctx.t, id));
  return rows[0] ? toAdminJob(rows[0]) : undefined;
}

export async function listJobs(ctx: AdminContext, page: PageRequest): Promise<Page<AdminJob>> {
  checkPage(page);
  const { rows } = await run(ctx.db, sql.listJobs(ctx.sql.adminDialect, ctx.t, page));
  return toPage(rows.map(toAdminJob), page.limit, (j) => j.id);
}
