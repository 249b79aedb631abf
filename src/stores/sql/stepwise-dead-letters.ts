import { StoreError } from '../../core/errors.js';
import type { DeadLetterStore, FailureRecord, RecordedFailure } from '../../ports/consumer-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { insertDeadLetterEvents } from './admin-sql.js';
import type { DecideRetry, RescheduleUpdate } from './dead-letter-row.js';
import {
  ignoreTransition,
  rescheduleTransition,
  resolveTransition,
  type DeadLetterTransition,
} from './dead-letter-transition.js';
import type { TableNames } from './naming.js';
import { clipError } from './outbox-row.js';
import type { SqlDialect } from './sql-dialect.js';

// MySQL and SQLite have no data-modifying CTE: a dead letter's change and its history row are
// separate statements in one transaction. PostgreSQL writes both in one statement instead.

/**
 * The rest of recording a delivery failure once the upsert has counted the attempt: decides retry
 * or dead, applies it with `applyDecision` (? status, ? next retry at, ? now, ? id) and records the
 * `failed` or `dead` event, all in `tx`.
 */
export async function applyFailureDecision(
  tx: SqlExecutor,
  d: SqlDialect,
  t: TableNames,
  applyDecision: string,
  counted: { readonly id: unknown; readonly attempts: unknown },
  f: FailureRecord,
  decide: DecideRetry,
): Promise<RecordedFailure> {
  const id = Number(counted.id);
  const attempts = Number(counted.attempts);
  const { status, nextRetryAt } = decide(attempts);
  await tx.query(applyDecision, [status, nextRetryAt, f.now, id]);
  const event = insertDeadLetterEvents(d, t, [
    {
      deadLetterId: id,
      messageId: f.messageId,
      group: f.group,
      at: f.now,
      kind: status === 'dead' ? 'dead' : 'failed',
      attempt: attempts,
      detail: clipError(f.error),
      actor: null,
    },
  ]);
  await tx.query(event.text, event.values);
  return { id, attempts, status, nextRetryAt };
}

/** A dialect's statements for {@link purgeSettledStepwise}; placeholders are `?`. */
export interface SettledPurgeSql {
  /** ? before, ? limit: ids of settled rows unchanged since `before`, locked for the transaction. */
  readonly selectSettled: string;
  /** `count` ids: the dead letters. */
  deleteRows(count: number): string;
  /** `count` dead-letter ids: their history rows. */
  deleteEvents(count: number): string;
  /**
   * Ids per DELETE: up to 500 (well under every driver's limit on bound values), or 1 where the
   * planner may scan the table rather than look up a list of ids (SQLite, see its outbox-sql.ts).
   */
  readonly chunk: number;
}

/**
 * Deletes at most `limit` settled dead letters and their history in `tx`, the caller's transaction:
 * select and lock, then delete by id. Returns how many rows went.
 */
export async function purgeSettledStepwise(
  tx: SqlExecutor,
  sql: SettledPurgeSql,
  before: number,
  limit: number,
): Promise<number> {
  const { rows } = await tx.query<{ id: unknown }>(sql.selectSettled, [before, limit]);
  const ids = rows.map((r) => Number(r.id));
  for (let i = 0; i < ids.length; i += sql.chunk) {
    const chunk = ids.slice(i, i + sql.chunk);
    const deleted = await tx.query(sql.deleteRows(chunk.length), chunk);
    // The rows are locked (or the transaction is exclusive): nothing can have moved them.
    if (deleted.rowCount !== chunk.length) throw new StoreError('a dead-letter purge lost rows it had locked');
    await tx.query(sql.deleteEvents(chunk.length), chunk);
  }
  return ids.length;
}

type StateChanges = Pick<DeadLetterStore, 'markResolved' | 'markResolvedMany' | 'reschedule' | 'ignore'>;

/** The state changes of {@link DeadLetterStore}, each a {@link DeadLetterTransition} with its history row. */
export abstract class StepwiseDeadLetters implements StateChanges {
  /** Runs the transition in a transaction of the store's own; returns how many rows changed. */
  protected abstract transition(tr: DeadLetterTransition): Promise<number>;

  async markResolved(id: number, owner: string, now: number): Promise<boolean> {
    return (await this.transition(resolveTransition([id], owner, now))) === 1;
  }

  async markResolvedMany(ids: readonly number[], owner: string, now: number): Promise<number> {
    return this.transition(resolveTransition(ids, owner, now));
  }

  async reschedule(u: RescheduleUpdate): Promise<boolean> {
    return (await this.transition(rescheduleTransition(u))) === 1;
  }

  async ignore(id: number, reason: string, now: number): Promise<boolean> {
    return (await this.transition(ignoreTransition([id], reason, null, now))) === 1;
  }
}
