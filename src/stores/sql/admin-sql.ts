import type {
  AuditFilter,
  DeadLetterFilter,
  JobKind,
  NewAuditEntry,
  NewJob,
  OutboxFilter,
  PageRequest,
} from '../../ports/admin-store.js';
import type { DeadLetterStatus } from '../../ports/consumer-store.js';
import { deadLetterColumnsAsOf, statusAsOf, statusInAsOf } from './dead-letter-status.js';
import type { TableNames } from './naming.js';
import { OUTBOX_COLUMNS } from './outbox-row.js';
import { Binder, Where, type SqlDialect, type Statement } from './sql-dialect.js';

/**
 * Admin statements that read the same in every dialect but for placeholders, row locks and
 * case-insensitive matching, which the {@link SqlDialect} supplies. Each returns its text with its
 * values. Dialect-specific ones live in each dialect's `admin-sql.ts`.
 */

const JOB_COLUMNS =
  'id, kind, filter, reason, actor, status, total, done, changed, cursor_id, max_id, rate_per_second, owner, lease_until, created_at, updated_at, error';

export function outboxConditions(w: Where, f: OutboxFilter): Where {
  return w
    .in('status', f.status)
    .eq('type', f.type)
    .eq('msg_key', f.key)
    .eq('topic', f.topic)
    .contains('last_error', f.error)
    .gte('created_at', f.from)
    .lt('created_at', f.to);
}

/** Statuses are as of `now` (see dead-letter-status.ts). */
export function deadLetterConditions(w: Where, f: DeadLetterFilter, d: SqlDialect, now: number): Where {
  return w
    .add((b) => (f.status === undefined ? undefined : statusInAsOf(b, f.status, now)))
    .eq('type', f.type)
    .eq('msg_key', f.key)
    .eq('group_name', f.group)
    .contains('last_error', f.error)
    .eq('poison', f.poison === undefined ? undefined : d.bool(f.poison))
    .gte('created_at', f.from)
    .lt('created_at', f.to);
}

export function listOutbox(d: SqlDialect, t: TableNames, f: OutboxFilter, page: PageRequest): Statement {
  const b = new Binder(d);
  const w = outboxConditions(new Where(b), f).lt('seq', page.before);
  return b.statement(
    `SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox} WHERE ${w} ORDER BY seq DESC LIMIT ${b.bind(page.limit + 1)}`,
  );
}

// Dead letters are read with their status as of `now`; the columns bind before the conditions, in text order.

export function listDeadLetters(
  d: SqlDialect,
  t: TableNames,
  f: DeadLetterFilter,
  page: PageRequest,
  now: number,
): Statement {
  const b = new Binder(d);
  const columns = deadLetterColumnsAsOf(b, now);
  const w = deadLetterConditions(new Where(b), f, d, now).lt('id', page.before);
  return b.statement(
    `SELECT ${columns} FROM ${t.deadLetters} WHERE ${w} ORDER BY id DESC LIMIT ${b.bind(page.limit + 1)}`,
  );
}

export function selectDeadLetterById(d: SqlDialect, t: TableNames, id: number, now: number): Statement {
  const b = new Binder(d);
  const columns = deadLetterColumnsAsOf(b, now);
  return b.statement(`SELECT ${columns} FROM ${t.deadLetters} WHERE id = ${b.bind(id)}`);
}

export function selectOutboxByMessageId(d: SqlDialect, t: TableNames, messageId: string): Statement {
  const b = new Binder(d);
  return b.statement(`SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox} WHERE message_id = ${b.bind(messageId)}`);
}

export function selectOutboxAttempts(d: SqlDialect, t: TableNames, messageId: string): Statement {
  const b = new Binder(d);
  return b.statement(
    `SELECT at, attempt, outcome, error, actor, confirmed_at FROM ${t.outboxAttempts} WHERE message_id = ${b.bind(messageId)} ORDER BY id`,
  );
}

export function selectInboxByMessageId(d: SqlDialect, t: TableNames, messageId: string): Statement {
  const b = new Binder(d);
  return b.statement(
    `SELECT group_name, recorded_at FROM ${t.inbox} WHERE message_id = ${b.bind(messageId)} ORDER BY recorded_at, group_name`,
  );
}

export function selectDeadLettersByMessageId(d: SqlDialect, t: TableNames, messageId: string, now: number): Statement {
  const b = new Binder(d);
  const columns = deadLetterColumnsAsOf(b, now);
  return b.statement(`SELECT ${columns} FROM ${t.deadLetters} WHERE message_id = ${b.bind(messageId)} ORDER BY id`);
}

export function selectDeadLetterEvents(d: SqlDialect, t: TableNames, messageId: string): Statement {
  const b = new Binder(d);
  return b.statement(
    `SELECT dead_letter_id, at, kind, attempt, detail, actor FROM ${t.deadLetterEvents} WHERE message_id = ${b.bind(messageId)} ORDER BY id`,
  );
}

export const outboxStats = (t: TableNames): Statement => ({
  text: `SELECT status, count(*) AS n, min(created_at) AS oldest FROM ${t.outbox} GROUP BY status`,
  values: [],
});

/** Counts by status as of `now`: rows under an expired lease count as pending. */
export function deadLetterCounts(d: SqlDialect, t: TableNames, now: number): Statement {
  const b = new Binder(d);
  return b.statement(`SELECT ${statusAsOf(b, now)} AS status, count(*) AS n FROM ${t.deadLetters} GROUP BY 1`);
}

export function countExpiredLeases(d: SqlDialect, t: TableNames, now: number): Statement {
  const b = new Binder(d);
  return b.statement(
    `SELECT count(*) AS n FROM ${t.deadLetters} WHERE status = 'replaying' AND lease_until <= ${b.bind(now)}`,
  );
}

/**
 * Rows (group_name, n, expired, oldest) of dead letters due for a retry at `now`, by consumer
 * group, longest waiting first: pending ones whose time has come, and those under an expired lease
 * (due since it ended). Each branch walks its status index (partial where the database has them).
 */
export function dueRetryGroups(d: SqlDialect, t: TableNames, now: number, limit: number): Statement {
  const b = new Binder(d);
  return b.statement(`SELECT group_name, count(*) AS n, sum(expired) AS expired, min(due_at) AS oldest FROM (
  SELECT group_name, 0 AS expired, next_retry_at AS due_at FROM ${t.deadLetters}
  WHERE status = 'pending' AND next_retry_at <= ${b.bind(now)}
  UNION ALL
  SELECT group_name, 1 AS expired, lease_until AS due_at FROM ${t.deadLetters}
  WHERE status = 'replaying' AND lease_until <= ${b.bind(now)}
) due GROUP BY group_name ORDER BY oldest, group_name LIMIT ${b.bind(limit)}`);
}

/** Counts at most `cap` rows: an overview polled every few seconds must not scan a large inbox. */
export const countInbox = (t: TableNames, cap: number): Statement => ({
  text: `SELECT count(*) AS n FROM (SELECT 1 AS one FROM ${t.inbox} LIMIT ${cap}) capped`,
  values: [],
});

const RELAY_COLUMNS = 'relay_id, host, pid, started_at, last_claimed_at, last_seen_at, stopped_at';

export const selectRelays = (t: TableNames): Statement => ({
  text: `SELECT ${RELAY_COLUMNS} FROM ${t.relays} WHERE stopped_at IS NULL ORDER BY relay_id`,
  values: [],
});

export function selectStoppedRelays(d: SqlDialect, t: TableNames, limit: number): Statement {
  const b = new Binder(d);
  return b.statement(
    `SELECT ${RELAY_COLUMNS} FROM ${t.relays} WHERE stopped_at IS NOT NULL ORDER BY stopped_at DESC, relay_id LIMIT ${b.bind(limit)}`,
  );
}

export function markRelayStopped(d: SqlDialect, t: TableNames, relayId: string, at: number): Statement {
  const b = new Binder(d);
  return b.statement(
    `UPDATE ${t.relays} SET stopped_at = ${b.bind(at)}, last_seen_at = ${b.bind(at)} WHERE relay_id = ${b.bind(relayId)}`,
  );
}

export function pruneStoppedRelays(d: SqlDialect, t: TableNames, before: number): Statement {
  const b = new Binder(d);
  return b.statement(`DELETE FROM ${t.relays} WHERE stopped_at IS NOT NULL AND stopped_at < ${b.bind(before)}`);
}

export function insertAudit(d: SqlDialect, t: TableNames, e: NewAuditEntry): Statement {
  const b = new Binder(d);
  const values = b.list([
    e.at,
    e.actor,
    e.role,
    e.action,
    e.target,
    e.reason,
    e.outcome,
    e.detail === null ? null : JSON.stringify(e.detail),
  ]);
  return b.statement(
    `INSERT INTO ${t.audit} (at, actor, role, action, target, reason, outcome, detail) VALUES (${values})`,
  );
}

export function listAudit(d: SqlDialect, t: TableNames, f: AuditFilter, page: PageRequest): Statement {
  const b = new Binder(d);
  const w = new Where(b)
    .eq('actor', f.actor)
    .eq('action', f.action)
    .eq('target', f.target)
    .gte('at', f.from)
    .lt('at', f.to)
    .lt('id', page.before);
  return b.statement(
    `SELECT id, at, actor, role, action, target, reason, outcome, detail FROM ${t.audit} WHERE ${w} ORDER BY id DESC LIMIT ${b.bind(page.limit + 1)}`,
  );
}

/** The table and id column a job of `kind` works through. */
export const jobTarget = (t: TableNames, kind: JobKind) =>
  kind === 'outbox.resend' ? { table: t.outbox, id: 'seq' } : { table: t.deadLetters, id: 'id' };

/** Dead letters are matched by their status as of `now`. */
function jobConditions(w: Where, kind: JobKind, filter: NewJob['filter'], d: SqlDialect, now: number): Where {
  return kind === 'outbox.resend'
    ? outboxConditions(w, filter as OutboxFilter)
    : deadLetterConditions(w, filter as DeadLetterFilter, d, now);
}

/** Rows a new job would act on: how many, and the highest id (the job's fixed upper bound). */
export function countJobRows(
  d: SqlDialect,
  t: TableNames,
  kind: JobKind,
  filter: NewJob['filter'],
  now: number,
): Statement {
  const b = new Binder(d);
  const { table, id } = jobTarget(t, kind);
  const w = jobConditions(new Where(b), kind, filter, d, now);
  return b.statement(`SELECT count(*) AS n, max(${id}) AS max_id FROM ${table} WHERE ${w}`);
}

/** The next rows of a job's batch, ascending from its cursor, never above its fixed maxId. Not locked. */
export function selectJobRows(
  d: SqlDialect,
  t: TableNames,
  job: { kind: JobKind; filter: NewJob['filter']; cursor: number; maxId: number },
  limit: number,
  now: number,
): Statement {
  const b = new Binder(d);
  const { table, id } = jobTarget(t, job.kind);
  const w = jobConditions(new Where(b).gt(id, job.cursor).lte(id, job.maxId), job.kind, job.filter, d, now);
  return b.statement(`SELECT ${id} AS id FROM ${table} WHERE ${w} ORDER BY ${id} LIMIT ${b.bind(limit)}`);
}

/**
 * Locks those of a batch's rows that no other transaction holds, and skips the others: a consumer
 * recording failures holds its dead letters (in message order) while it waits for more, and a
 * relay its outbox rows, so waiting for them could close a cycle. Returns the ids it locked.
 */
export function lockJobRows(d: SqlDialect, t: TableNames, kind: JobKind, ids: readonly number[]): Statement {
  const b = new Binder(d);
  const { table, id } = jobTarget(t, kind);
  return b.statement(
    `SELECT ${id} AS id FROM ${table} WHERE ${id} IN (${b.list(ids)}) ORDER BY ${id} ${d.forUpdateSkipLocked}`,
  );
}

/** A job with no row to act on is done from the start: no runner needs to claim it. */
export function insertJob(d: SqlDialect, t: TableNames, job: NewJob, total: number, maxId: number): Statement {
  const b = new Binder(d);
  const values = b.list([
    job.kind,
    JSON.stringify(job.filter),
    job.reason,
    job.actor,
    total,
    maxId,
    job.ratePerSecond,
    job.now,
    job.now,
    total === 0 ? 'done' : 'running',
  ]);
  return b.statement(`INSERT INTO ${t.adminJobs} (kind, filter, reason, actor, total, max_id, rate_per_second,
  created_at, updated_at, status, done, changed, cursor_id) VALUES (${values}, 0, 0, 0)`);
}

export function selectJob(d: SqlDialect, t: TableNames, id: number, lock = false): Statement {
  const b = new Binder(d);
  return b.statement(`SELECT ${JOB_COLUMNS} FROM ${t.adminJobs} WHERE id = ${b.bind(id)} ${lock ? d.forUpdate : ''}`);
}

export function listJobs(d: SqlDialect, t: TableNames, page: PageRequest): Statement {
  const b = new Binder(d);
  const w = new Where(b).lt('id', page.before);
  return b.statement(
    `SELECT ${JOB_COLUMNS} FROM ${t.adminJobs} WHERE ${w} ORDER BY id DESC LIMIT ${b.bind(page.limit + 1)}`,
  );
}

/** A running job nobody holds, or whose holder's lease ran out (or that `owner` already holds). */
export function selectClaimableJob(
  d: SqlDialect,
  t: TableNames,
  owner: string,
  now: number,
  onlyId?: number,
): Statement {
  const b = new Binder(d);
  // Bind in text order: `?` placeholders are positional.
  const claimable = `status = 'running' AND (owner IS NULL OR lease_until <= ${b.bind(now)} OR owner = ${b.bind(owner)})`;
  const only = onlyId === undefined ? '' : `AND id = ${b.bind(onlyId)}`;
  return b.statement(`SELECT id FROM ${t.adminJobs} WHERE ${claimable} ${only}
ORDER BY id LIMIT 1 ${d.forUpdateSkipLocked}`);
}

/** Only the owner's own lease, and only while the job runs. */
export function releaseJob(d: SqlDialect, t: TableNames, id: number, owner: string, now: number): Statement {
  const b = new Binder(d);
  return b.statement(`UPDATE ${t.adminJobs} SET owner = NULL, lease_until = NULL, updated_at = ${b.bind(now)}
WHERE id = ${b.bind(id)} AND owner = ${b.bind(owner)} AND status = 'running'`);
}

/** Compare-and-set: repeats the claimable condition, so a job taken meanwhile is left alone. */
export function takeJob(
  d: SqlDialect,
  t: TableNames,
  id: number,
  owner: string,
  now: number,
  leaseMs: number,
): Statement {
  const b = new Binder(d);
  return b.statement(`UPDATE ${t.adminJobs} SET owner = ${b.bind(owner)}, lease_until = ${b.bind(now + leaseMs)},
  updated_at = ${b.bind(now)}
WHERE id = ${b.bind(id)} AND status = 'running'
  AND (owner IS NULL OR lease_until <= ${b.bind(now)} OR owner = ${b.bind(owner)})`);
}

export function advanceJob(
  d: SqlDialect,
  t: TableNames,
  u: {
    id: number;
    owner: string;
    cursor: number;
    examined: number;
    changed: number;
    status: 'running' | 'done';
    leaseUntil: number;
    now: number;
  },
): Statement {
  const b = new Binder(d);
  return b.statement(`UPDATE ${t.adminJobs} SET cursor_id = ${b.bind(u.cursor)}, done = done + ${b.bind(u.examined)},
  changed = changed + ${b.bind(u.changed)}, status = ${b.bind(u.status)}, lease_until = ${b.bind(u.leaseUntil)},
  updated_at = ${b.bind(u.now)}
WHERE id = ${b.bind(u.id)} AND owner = ${b.bind(u.owner)} AND status = 'running'`);
}

/** running -> `status` (cancelled or failed); with `owner`, only while that owner holds the job. */
export function endJob(
  d: SqlDialect,
  t: TableNames,
  id: number,
  status: 'cancelled' | 'failed',
  error: string | null,
  now: number,
  owner?: string,
): Statement {
  const b = new Binder(d);
  // Bind in text order: `?` placeholders are positional.
  const set = `status = ${b.bind(status)}, error = ${b.bind(error)}, updated_at = ${b.bind(now)}`;
  const w = new Where(b).eq('id', id).eq('status', 'running').eq('owner', owner);
  return b.statement(`UPDATE ${t.adminJobs} SET ${set} WHERE ${w}`);
}

/**
 * Locks the given dead letters that are in one of `from` (and held by `claimedBy`), in id order.
 * With `asOf`, by their status as of then: a row under an expired lease is pending.
 */
export function lockDeadLetters(
  d: SqlDialect,
  t: TableNames,
  ids: readonly number[],
  from: readonly DeadLetterStatus[],
  claimedBy: string | undefined,
  withBody: boolean,
  asOf?: number,
): Statement {
  const b = new Binder(d);
  const w = new Where(b).in('id', ids);
  if (asOf === undefined) w.in('status', from);
  else w.add((binder) => statusInAsOf(binder, from, asOf));
  w.eq('claimed_by', claimedBy);
  return b.statement(
    `SELECT id, message_id, group_name, attempts, status, lease_until${withBody ? ', body' : ''} FROM ${t.deadLetters} WHERE ${w} ORDER BY id ${d.forUpdate}`,
  );
}

/** `set` maps column names (Surety's own, never input) to values. */
export function updateDeadLetters(
  d: SqlDialect,
  t: TableNames,
  ids: readonly number[],
  set: Readonly<Record<string, unknown>>,
): Statement {
  const b = new Binder(d);
  const assignments = Object.entries(set)
    .map(([column, value]) => `${column} = ${b.bind(value)}`)
    .join(', ');
  return b.statement(`UPDATE ${t.deadLetters} SET ${assignments} WHERE id IN (${b.list(ids)})`);
}

export interface EventRow {
  readonly deadLetterId: number;
  readonly messageId: string;
  readonly group: string;
  readonly at: number;
  readonly kind: string;
  readonly attempt: number;
  readonly detail: string | null;
  readonly actor: string | null;
}

export function insertDeadLetterEvents(d: SqlDialect, t: TableNames, events: readonly EventRow[]): Statement {
  const b = new Binder(d);
  const rows = events
    .map((e) => `(${b.list([e.deadLetterId, e.messageId, e.group, e.at, e.kind, e.attempt, e.detail, e.actor])})`)
    .join(', ');
  return b.statement(`INSERT INTO ${t.deadLetterEvents} (dead_letter_id, message_id, group_name, at, kind, attempt,
  detail, actor) VALUES ${rows}`);
}

/**
 * Makes the rows pending and due at `now`, attempts 0, claim and sent time cleared: for dialects
 * whose relay reads the outbox table itself (the claim's lease is next_attempt_at, so setting it to
 * now makes the row due at once). PostgreSQL, with its queue table, has its own.
 */
export function resendOutbox(d: SqlDialect, t: TableNames, seqs: readonly number[], now: number): Statement {
  const b = new Binder(d);
  return b.statement(`UPDATE ${t.outbox} SET status = 'pending', attempts = 0, next_attempt_at = ${b.bind(now)},
  claimed_by = NULL, sent_at = NULL
WHERE seq IN (${b.list(seqs)})`);
}

/** Locks outbox rows by seq or by message id, in seq order. */
export function lockOutboxRows(
  d: SqlDialect,
  t: TableNames,
  by: { seqs: readonly number[] } | { messageId: string },
): Statement {
  const b = new Binder(d);
  const w = 'seqs' in by ? new Where(b).in('seq', by.seqs) : new Where(b).eq('message_id', by.messageId);
  return b.statement(`SELECT seq, message_id, sent_at FROM ${t.outbox} WHERE ${w} ORDER BY seq ${d.forUpdate}`);
}

export interface AttemptRow {
  readonly messageId: string;
  readonly attempt: number;
  readonly at: number;
  readonly outcome: 'failed' | 'dead' | 'resent';
  readonly error: string | null;
  readonly actor: string | null;
  /** A resend's: when the copy it replaces was confirmed. */
  readonly confirmedAt?: number | null;
}

export function insertOutboxAttempts(d: SqlDialect, t: TableNames, attempts: readonly AttemptRow[]): Statement {
  const b = new Binder(d);
  const rows = attempts
    .map((a) => `(${b.list([a.messageId, a.attempt, a.at, a.outcome, a.error, a.actor, a.confirmedAt ?? null])})`)
    .join(', ');
  return b.statement(
    `INSERT INTO ${t.outboxAttempts} (message_id, attempt, at, outcome, error, actor, confirmed_at) VALUES ${rows}`,
  );
}
