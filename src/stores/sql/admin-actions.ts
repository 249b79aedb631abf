import { StoreError } from '../../core/errors.js';
import type { ActionContext, EditOptions, NewAuditEntry, RelayHeartbeat } from '../../ports/admin-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { run, type AdminContext } from './admin-context.js';
import * as sql from './admin-sql.js';
import { ignoreTransition, PREVIOUS_BODY, replayTransition, transitionDeadLetters } from './dead-letter-transition.js';
import { resendOutboxRows } from './outbox-resend.js';

/**
 * What operators do: every action a conditional update plus its history row and, when the caller
 * gives one, its audit entry, in one transaction.
 */

export function requestReplay(ctx: AdminContext, id: number, a: ActionContext): Promise<boolean> {
  return changedOne(ctx, a.audit, (tx) =>
    transitionDeadLetters(tx, ctx.sql.adminDialect, ctx.t, replayTransition([id], a.actor, a.now)),
  );
}

export function ignoreDeadLetter(ctx: AdminContext, id: number, reason: string, a: ActionContext): Promise<boolean> {
  return changedOne(ctx, a.audit, (tx) =>
    transitionDeadLetters(tx, ctx.sql.adminDialect, ctx.t, ignoreTransition([id], reason, a.actor, a.now)),
  );
}

/**
 * A row not being replayed gets a new (UTF-8) body; its status stays, the old body goes into the
 * history. A row under an expired lease counts as pending: the edit releases the dead replayer's
 * claim, so it cannot settle the row with the old body. With `replay`, only a row replay accepts is
 * edited, and it is made due in the same transaction: a replay that fails takes the edit back with it.
 */
export function editDeadLetter(
  ctx: AdminContext,
  id: number,
  body: string,
  a: ActionContext,
  options: EditOptions = {},
): Promise<boolean> {
  const d = ctx.sql.adminDialect;
  const replay = replayTransition([id], a.actor, a.now);
  return changedOne(ctx, a.audit, async (tx) => {
    const edited = await transitionDeadLetters(tx, d, ctx.t, {
      ids: [id],
      from: options.replay ? replay.from : ['pending', 'resolved', 'ignored', 'dead'],
      asOf: a.now,
      set: { body, body_encoding: 'utf8', updated_at: a.now },
      event: { kind: 'edited', at: a.now, actor: a.actor, detail: PREVIOUS_BODY },
    });
    if (edited !== 1 || !options.replay) return edited;
    // The edit locked the row in a state replay accepts, so this can only fail by an error, which rolls both back.
    if ((await transitionDeadLetters(tx, d, ctx.t, replay)) !== 1) {
      throw new StoreError(`dead letter ${id} was edited but could not be made due; nothing was changed`);
    }
    return 1;
  });
}

export function resendOutbox(ctx: AdminContext, messageId: string, a: ActionContext): Promise<boolean> {
  if (!ctx.sql.adminDialect.isOutboxMessageId(messageId)) return Promise.resolve(false);
  return changedOne(ctx, a.audit, (tx) => resendOutboxRows(tx, ctx.sql, ctx.t, { messageId }, a.actor, a.now));
}

export async function recordHeartbeat(ctx: AdminContext, h: RelayHeartbeat): Promise<void> {
  await run(ctx.db, ctx.sql.upsertHeartbeat(ctx.t, h));
}

/** How long a stopped relay's row outlives a later stop: enough for the doctor to say which relay stopped. */
const STOPPED_RELAY_KEPT_MS = 86_400_000;

export async function recordRelayStopped(ctx: AdminContext, relayId: string, at: number): Promise<void> {
  const d = ctx.sql.adminDialect;
  await run(ctx.db, sql.markRelayStopped(d, ctx.t, relayId, at));
  await run(ctx.db, sql.pruneStoppedRelays(d, ctx.t, at - STOPPED_RELAY_KEPT_MS));
}

export function appendAudit(ctx: AdminContext, entry: NewAuditEntry): Promise<number> {
  return ctx.db.transaction((tx) => insertReturningId(tx, ctx, sql.insertAudit(ctx.sql.adminDialect, ctx.t, entry)));
}

/** Inserts an action's audit entry in the action's transaction. */
export async function writeAudit(tx: SqlExecutor, ctx: AdminContext, entry: NewAuditEntry): Promise<void> {
  await run(tx, sql.insertAudit(ctx.sql.adminDialect, ctx.t, entry));
}

/** Inserts one row and reads its id back on the same connection (MySQL 8 has no RETURNING). */
export async function insertReturningId(
  tx: SqlExecutor,
  ctx: AdminContext,
  insert: { text: string; values: readonly unknown[] },
): Promise<number> {
  await run(tx, insert);
  const { rows } = await tx.query<{ id: unknown }>(ctx.sql.adminDialect.lastInsertId);
  return Number(rows[0]!.id);
}

/** Runs a one-row action and, if it changed the row, inserts its audit entry in the same transaction. */
async function changedOne(
  ctx: AdminContext,
  audit: NewAuditEntry | undefined,
  work: (tx: SqlExecutor) => Promise<number>,
): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    if ((await work(tx)) !== 1) return false;
    if (audit) await writeAudit(tx, ctx, audit);
    return true;
  });
}
