import { StoreError } from '../../core/errors.js';
import type { DeadLetterEventKind } from '../../ports/admin-store.js';
import type { DeadLetterStatus, DeadLetterStore } from '../../ports/consumer-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { insertDeadLetterEvents, lockDeadLetters, updateDeadLetters } from './admin-sql.js';
import type { TableNames } from './naming.js';
import { clipError } from './outbox-row.js';
import type { SqlDialect } from './sql-dialect.js';

/** Marks an event whose detail is the body the update replaces (an edit). */
export const PREVIOUS_BODY = Symbol('previous body');

export interface DeadLetterTransition {
  readonly ids: readonly number[];
  /** The states a row must be in to change. */
  readonly from: readonly DeadLetterStatus[];
  /** Only rows held by this replayer. */
  readonly claimedBy?: string;
  /**
   * Match `from` by the status as of this time, as operators see it: a row whose replayer's lease
   * has ended by then counts as pending, and its claim is released by the change. Without it, by
   * the stored status (a replayer settling its own claim).
   */
  readonly asOf?: number;
  /** Column assignments; names are Surety's own. */
  readonly set: Readonly<Record<string, unknown>>;
  readonly event: {
    readonly kind: DeadLetterEventKind;
    readonly at: number;
    readonly actor: string | null;
    readonly detail: string | null | typeof PREVIOUS_BODY;
    /** The row's attempts after the change, when the change sets them. */
    readonly attempt?: number;
  };
}

/** What a change makes of a row taken from under an expired lease: no longer anyone's claim. */
const RELEASED = { status: 'pending', claimed_by: null, lease_until: null } as const;

/**
 * A conditional update of dead letters with one history row each, in the caller's transaction:
 * lock the rows still in an allowed state, update exactly those, record their events. Returns how
 * many changed. Rows in another state (or missing) are left alone, so a transition never applies
 * twice. A live lease still refuses: its replayer's claim is re-checked under the row lock.
 */
export async function transitionDeadLetters(
  tx: SqlExecutor,
  d: SqlDialect,
  t: TableNames,
  tr: DeadLetterTransition,
): Promise<number> {
  if (tr.ids.length === 0) return 0;
  const withBody = tr.event.detail === PREVIOUS_BODY;
  const lock = lockDeadLetters(d, t, tr.ids, tr.from, tr.claimedBy, withBody, tr.asOf);
  const { rows } = await tx.query(lock.text, lock.values);
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => Number(r.id));
  const asOf = tr.asOf;
  const expired = new Set(
    asOf === undefined ? [] : rows.filter((r) => underExpiredLease(r, asOf)).map((r) => Number(r.id)),
  );
  const others = ids.filter((id) => !expired.has(id));
  await updateLocked(tx, d, t, others, tr.set);
  // Taken from under an expired lease: the dead replayer's claim goes with the change.
  await updateLocked(tx, d, t, [...expired], { ...RELEASED, ...tr.set });
  const { kind, at, actor, detail, attempt } = tr.event;
  const events = insertDeadLetterEvents(
    d,
    t,
    rows.map((r) => ({
      deadLetterId: Number(r.id),
      messageId: String(r.message_id),
      group: String(r.group_name),
      at,
      kind,
      attempt: attempt ?? Number(r.attempts),
      detail: detail === PREVIOUS_BODY ? bodyText(r.body) : detail,
      actor,
    })),
  );
  await tx.query(events.text, events.values);
  return ids.length;
}

/** Updates rows the transition has locked, checking that it changed every one. */
async function updateLocked(
  tx: SqlExecutor,
  d: SqlDialect,
  t: TableNames,
  ids: readonly number[],
  set: Readonly<Record<string, unknown>>,
): Promise<void> {
  if (ids.length === 0) return;
  const update = updateDeadLetters(d, t, ids, set);
  const updated = await tx.query(update.text, update.values);
  // The rows are locked (or the transaction is exclusive): nothing can have moved them.
  if (updated.rowCount !== ids.length) throw new StoreError('a dead-letter transition lost rows it had locked');
}

const bodyText = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

const underExpiredLease = (r: Record<string, unknown>, asOf: number) =>
  String(r.status) === 'replaying' && r.lease_until !== null && Number(r.lease_until) <= asOf;

/** The states an operator's replay accepts. */
export const REPLAYABLE: readonly DeadLetterStatus[] = ['pending', 'dead', 'ignored'];

/** What a bulk replay acts on when its filter names no status: an ignored row was closed on purpose. */
export const JOB_REPLAY_DEFAULT: readonly DeadLetterStatus[] = ['pending', 'dead'];

/**
 * The states a bulk replay job may move rows from: those its filter names that replay accepts, or
 * pending and dead when it names none. Checked again under the row lock, so a row ignored after the
 * job was created is not revived by it.
 * @example jobReplayFrom({ status: ['ignored', 'resolved'] }) // ['ignored']
 */
export function jobReplayFrom(filter: { readonly status?: readonly DeadLetterStatus[] }): DeadLetterStatus[] {
  return (filter.status ?? JOB_REPLAY_DEFAULT).filter((s) => REPLAYABLE.includes(s));
}

/**
 * `from` (by default pending, dead or ignored, as of `now`) -> pending, due now (the replay job
 * picks it up).
 */
export const replayTransition = (
  ids: readonly number[],
  actor: string,
  now: number,
  from: readonly DeadLetterStatus[] = REPLAYABLE,
): DeadLetterTransition => ({
  ids,
  from,
  asOf: now,
  set: {
    status: 'pending',
    next_retry_at: now,
    ignored_reason: null,
    claimed_by: null,
    lease_until: null,
    updated_at: now,
  },
  event: { kind: 'replay_requested', at: now, actor, detail: null },
});

/** pending or dead (as of `now`) -> ignored, keeping the reason. */
export const ignoreTransition = (
  ids: readonly number[],
  reason: string,
  actor: string | null,
  now: number,
): DeadLetterTransition => ({
  ids,
  from: ['pending', 'dead'],
  asOf: now,
  set: { status: 'ignored', ignored_reason: reason, next_retry_at: null, updated_at: now },
  event: { kind: 'ignored', at: now, actor, detail: reason },
});

/** replaying (held by owner) -> resolved. */
export const resolveTransition = (ids: readonly number[], owner: string, now: number): DeadLetterTransition => ({
  ids,
  from: ['replaying'],
  claimedBy: owner,
  set: { status: 'resolved', next_retry_at: null, claimed_by: null, lease_until: null, updated_at: now },
  event: { kind: 'resolved', at: now, actor: owner, detail: null },
});

/** replaying (held by owner) -> pending with a new time, or dead. */
export function rescheduleTransition(u: Parameters<DeadLetterStore['reschedule']>[0]): DeadLetterTransition {
  const error = clipError(u.error);
  return {
    ids: [u.id],
    from: ['replaying'],
    claimedBy: u.owner,
    set: {
      attempts: u.attempts,
      status: u.decision.status,
      next_retry_at: u.decision.nextRetryAt,
      last_error: error,
      claimed_by: null,
      lease_until: null,
      updated_at: u.now,
    },
    event: {
      kind: u.decision.status === 'dead' ? 'dead' : 'replay_failed',
      at: u.now,
      actor: u.owner,
      detail: error,
      attempt: u.attempts,
    },
  };
}
