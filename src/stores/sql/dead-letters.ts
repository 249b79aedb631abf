import { StoreError } from '../../core/errors.js';
import type { DeadLetterStore, FailureRecord, RetryDecision } from '../../ports/consumer-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { countsFromRows, toDeadLetterRow, type ClaimDueRequest, type RescheduleUpdate } from './dead-letter-row.js';
import {
  ignoreTransition,
  rescheduleTransition,
  resolveTransition,
  transitionDeadLetters,
  type DeadLetterTransition,
} from './dead-letter-transition.js';
import type { TableNames } from './naming.js';
import { clipError } from './outbox-row.js';
import { rangeRows, runIn, type HotStatement, type OneOrStepwise, type OwnConnection } from './own-connection.js';
import type { SqlDialect, Statement } from './sql-dialect.js';

/**
 * A dialect's dead-letter statements, placeholders its own. PostgreSQL changes a row and writes its
 * history in one statement (a data-modifying CTE); MySQL and SQLite cannot, and say so by giving
 * the stepwise forms, run by the shared code in a transaction.
 */
export interface DeadLetterStatements {
  /** Builds the shared transitions' statements. */
  readonly dialect: SqlDialect;
  /** Inserts the failure or counts one more attempt; returns `id` and `attempts` unless `selectAttempts` is given. */
  upsertFailure(f: FailureRecord, error: string): Statement;
  /** Where the upsert returns nothing (MySQL has no RETURNING): `id` and `attempts`, read in the same transaction. */
  selectAttempts?(messageId: string, group: string): Statement;
  /** The decision applied to the counted row and its `failed` or `dead` history row, in order. */
  applyDecision(id: number, attempts: number, decision: RetryDecision, f: FailureRecord, error: string): Statement[];
  /**
   * Takes due rows (expired leases first) for a replayer: one range statement returning them, or
   * `stepwise` in a transaction, the `selects` in order while rows are wanted (each given how many,
   * returning rows it locked), then `take` over their ids, `chunk` at a time. A take that changes
   * fewer rows than it was given fails the claim. The taken rows are the ones `take` returns, or
   * without `returnsRows`, the selected ones as the take left them.
   */
  readonly claim: OneOrStepwise<
    ClaimDueRequest,
    {
      readonly selects: readonly ((req: ClaimDueRequest, limit: number) => Statement)[];
      readonly take: {
        readonly chunk: number;
        readonly returnsRows: boolean;
        statement(req: ClaimDueRequest, ids: readonly unknown[]): Statement;
      };
    }
  >;
  /**
   * A replayer settling its claim in one statement with its history row (`rowCount` changed).
   * Without it, the shared transitions do it, in a transaction of the store's own.
   */
  readonly settle?: {
    resolve(id: number, owner: string, now: number): HotStatement;
    resolveMany(ids: readonly number[], owner: string, now: number): HotStatement;
    reschedule(u: RescheduleUpdate): HotStatement;
  };
  /** Ids per shared transition: 1 where a list of ids may be planned as a table scan (SQLite). */
  readonly transitionChunk: number;
  selectByKey(messageId: string, group: string): Statement;
  /** `status` and `n` per status, of one group or all. */
  countByStatus(group?: string): Statement;
  /**
   * Deletes settled rows with their history: one range statement returning the count as `n`, or
   * `stepwise` in a transaction, a select of locked ids, then deletes of `chunk` ids at a time.
   */
  readonly purgeSettled:
    | { readonly mode: 'one'; statement(before: number, limit: number): Statement }
    | {
        readonly mode: 'stepwise';
        readonly chunk: number;
        select(before: number, limit: number): Statement;
        deleteRows(ids: readonly number[]): Statement;
        deleteEvents(ids: readonly number[]): Statement;
      };
}

/** `countByStatus` from a dialect's text builder, whose only placeholder, with `byGroup`, is the group. */
export function countStatement(text: (byGroup: boolean) => string): DeadLetterStatements['countByStatus'] {
  return (group) => (group === undefined ? { text: text(false), values: [] } : { text: text(true), values: [group] });
}

/** The dead-letter concern of every SQL store, given the dialect's statements and the store's connection. */
export function createDeadLetterStore(db: OwnConnection, sql: DeadLetterStatements, t: TableNames): DeadLetterStore {
  const { settle } = sql;

  function transition(tr: DeadLetterTransition): Promise<number> {
    if (tr.ids.length === 0) return Promise.resolve(0);
    return db.transaction(async (tx) => {
      let n = 0;
      for (const ids of chunks(tr.ids, sql.transitionChunk)) {
        n += await transitionDeadLetters(tx, sql.dialect, t, { ...tr, ids });
      }
      return n;
    });
  }

  const rowCount = async (s: Statement) => (await db.run(s.text, s.values)).rowCount;

  return {
    async recordDeliveryFailure(tx, f, decide) {
      const error = clipError(f.error);
      let { rows } = await runIn<{ id: unknown; attempts: unknown }>(tx, sql.upsertFailure(f, error));
      if (sql.selectAttempts) ({ rows } = await runIn(tx, sql.selectAttempts(f.messageId, f.group)));
      const id = Number(rows[0]!.id);
      const attempts = Number(rows[0]!.attempts);
      const decision = decide(attempts);
      for (const s of sql.applyDecision(id, attempts, decision, f, error)) await runIn(tx, s);
      return { id, attempts, status: decision.status, nextRetryAt: decision.nextRetryAt };
    },

    async claimDue(req) {
      const rows = await rangeRows(db, sql.claim, req, claimStepwise);
      return rows.map(toDeadLetterRow).sort((a, b) => a.id - b.id);
    },

    async markResolved(id, owner, now) {
      if (settle) return (await rowCount(settle.resolve(id, owner, now))) === 1;
      return (await transition(resolveTransition([id], owner, now))) === 1;
    },

    async markResolvedMany(ids, owner, now) {
      if (ids.length === 0) return 0;
      if (settle) return rowCount(settle.resolveMany(ids, owner, now));
      return transition(resolveTransition(ids, owner, now));
    },

    async reschedule(u) {
      if (settle) return (await rowCount(settle.reschedule(u))) === 1;
      return (await transition(rescheduleTransition(u))) === 1;
    },

    async ignore(id, reason, now) {
      return (await transition(ignoreTransition([id], reason, null, now))) === 1;
    },

    async getDeadLetter(messageId, group) {
      const s = sql.selectByKey(messageId, group);
      const { rows } = await db.run(s.text, s.values);
      return rows[0] ? toDeadLetterRow(rows[0]) : undefined;
    },

    async countDeadLetters(group) {
      const s = sql.countByStatus(group);
      return countsFromRows((await db.run(s.text, s.values)).rows);
    },

    async purgeSettledDeadLetters(before, limit) {
      const purge = sql.purgeSettled;
      if (purge.mode === 'one') {
        const s = purge.statement(before, limit);
        return Number((await db.runRange(s.text, s.values)).rows[0]!.n);
      }
      return db.transaction(async (tx) => {
        const { rows } = await runIn<{ id: unknown }>(tx, purge.select(before, limit));
        const ids = rows.map((r) => Number(r.id));
        for (const chunk of chunks(ids, purge.chunk)) {
          const deleted = await runIn(tx, purge.deleteRows(chunk));
          // The rows are locked (or the transaction is exclusive): nothing can have moved them.
          if (deleted.rowCount !== chunk.length) throw new StoreError('a dead-letter purge lost rows it had locked');
          await runIn(tx, purge.deleteEvents(chunk));
        }
        return ids.length;
      });
    },
  };
}

type StepwiseClaim = Extract<DeadLetterStatements['claim'], { mode: 'stepwise' }>;

async function claimStepwise(tx: SqlExecutor, claim: StepwiseClaim, req: ClaimDueRequest) {
  const selected: Record<string, unknown>[] = [];
  for (const select of claim.selects) {
    if (selected.length >= req.limit) break;
    selected.push(...(await runIn(tx, select(req, req.limit - selected.length))).rows);
  }
  const ids = selected.map((r) => r.id);
  const returned: Record<string, unknown>[] = [];
  let taken = 0;
  for (const chunk of chunks(ids, claim.take.chunk)) {
    const res = await runIn(tx, claim.take.statement(req, chunk));
    taken += res.rowCount;
    returned.push(...res.rows);
  }
  // The rows are locked by this transaction, so nothing can have changed them; if something did, take none.
  if (taken !== ids.length) throw new StoreError('a dead-letter claim lost rows it had locked');
  if (claim.take.returnsRows) return returned;
  const claimed = {
    status: 'replaying',
    claimed_by: req.owner,
    lease_until: req.now + req.leaseMs,
    updated_at: req.now,
  };
  return selected.map((r) => ({ ...r, ...claimed }));
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
