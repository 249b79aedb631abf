import { randomUUID } from 'node:crypto';
import { StoreError } from '../../core/errors.js';
import type {
  DeadLetterRow,
  DeadLetterStatus,
  DeadLetterStore,
  FailureRecord,
  InboxStore,
  RecordedFailure,
  VersionGuardKey,
  VersionGuardStore,
} from '../../ports/consumer-store.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { countsFromRows, toDeadLetterRow, type ClaimDueRequest, type DecideRetry } from '../sql/dead-letter-row.js';
import { transitionDeadLetters, type DeadLetterTransition } from '../sql/dead-letter-transition.js';
import type { TableNames } from '../sql/naming.js';
import { clipError } from '../sql/outbox-row.js';
import {
  applyFailureDecision,
  purgeSettledStepwise,
  StepwiseDeadLetters,
  type SettledPurgeSql,
} from '../sql/stepwise-dead-letters.js';
import { AsyncMutex } from '../sql/async-mutex.js';
import { adminDialect } from './admin-sql.js';
import * as dl from './dead-letter-sql.js';
import { isDuplicateKey } from './errors.js';
import * as inbox from './inbox-sql.js';
import * as guards from './version-guard-sql.js';

/** How the consumer operations reach the store's own pool; errors arrive as StoreError. */
export interface MysqlOwnConnection {
  /** One statement in autocommit. */
  run(text: string, values?: unknown[]): Promise<SqlResult>;
  /** A READ COMMITTED transaction: locking reads take no gap locks. */
  ownTransaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** Per transaction: a raise and its read-back must not interleave with another raise's (handlers at once). */
const raiseLocks = new WeakMap<SqlExecutor, AsyncMutex>();

/** Inbox, dead letters and version guards on MySQL/MariaDB; MysqlOutboxStore delegates its consumer methods here. */
export class MysqlConsumerOps extends StepwiseDeadLetters implements InboxStore, DeadLetterStore, VersionGuardStore {
  constructor(
    private readonly db: MysqlOwnConnection,
    private readonly t: TableNames,
    private readonly prefix: string,
  ) {
    super();
  }

  async recordInbox(tx: SqlExecutor, messageId: string, group: string, now: number): Promise<boolean> {
    try {
      await tx.query(inbox.insertInbox(this.t), [messageId, group, now]);
      return true;
    } catch (err) {
      // InnoDB rolls back just the failed statement: the caller's transaction goes on.
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** One multi-row INSERT; on any duplicate (rare: a redelivery) InnoDB undoes just it, and ids go one by one. */
  async recordInboxBatch(tx: SqlExecutor, ids: readonly string[], group: string, now: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    try {
      await tx.query(
        inbox.insertInboxRows(this.t, ids.length),
        ids.flatMap((id) => [id, group, now]),
      );
      return new Set(ids);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const fresh = new Set<string>();
    for (const id of ids) if (await this.recordInbox(tx, id, group, now)) fresh.add(id);
    return fresh;
  }

  async inboxRecordedAt(messageId: string, group: string): Promise<number | undefined> {
    const { rows } = await this.db.run(inbox.selectRecordedAt(this.t), [messageId, group]);
    return rows[0] ? Number(rows[0].recorded_at) : undefined;
  }

  /** In READ COMMITTED, so the range delete takes no gap locks that would stall consumers' inbox inserts. */
  async purgeInbox(before: number, limit: number): Promise<number> {
    return this.db.ownTransaction(async (tx) => (await tx.query(inbox.purgeInbox(this.t), [before, limit])).rowCount);
  }

  async recordDeliveryFailure(tx: SqlExecutor, f: FailureRecord, decide: DecideRetry): Promise<RecordedFailure> {
    const error = clipError(f.error);
    await tx.query(dl.upsertFailure(this.t), [
      f.messageId,
      f.group,
      f.topic,
      f.type,
      f.key,
      f.version,
      JSON.stringify(f.headers),
      f.body,
      f.bodyEncoding,
      error,
      f.poison,
      f.now,
      f.now,
      error,
      f.poison,
      f.now,
    ]);
    const { rows } = await tx.query<{ id: number | string; attempts: number }>(dl.selectAttempts(this.t), [
      f.messageId,
      f.group,
    ]);
    return applyFailureDecision(tx, adminDialect, this.t, dl.applyDecision(this.t), rows[0]!, f, decide);
  }

  /** Expired leases first, then due rows, each locked with SKIP LOCKED, then taken in one conditional update. */
  async claimDue(req: ClaimDueRequest): Promise<DeadLetterRow[]> {
    const leaseUntil = req.now + req.leaseMs;
    const rows = await this.db.ownTransaction(async (tx) => {
      const { rows } = await tx.query(dl.selectExpiredLeases(this.t, this.prefix), [req.now, req.group, req.limit]);
      if (rows.length < req.limit) {
        const due = await tx.query(dl.selectDue(this.t, this.prefix), [req.now, req.group, req.limit - rows.length]);
        rows.push(...due.rows);
      }
      if (rows.length === 0) return rows;
      const ids = rows.map((r) => r.id);
      const taken = await tx.query(dl.claimRows(this.t, ids.length), [
        req.owner,
        leaseUntil,
        req.now,
        req.now,
        req.now,
        ...ids,
      ]);
      // The rows are locked by this transaction, so nothing can have changed them; if something did, take none.
      if (taken.rowCount !== ids.length) throw new StoreError('MySQL: a dead-letter claim lost rows it had locked');
      return rows;
    });
    return rows
      .map((r) =>
        toDeadLetterRow({
          ...r,
          status: 'replaying',
          claimed_by: req.owner,
          lease_until: leaseUntil,
          updated_at: req.now,
        }),
      )
      .sort((a, b) => a.id - b.id);
  }

  async getDeadLetter(messageId: string, group: string): Promise<DeadLetterRow | undefined> {
    const { rows } = await this.db.run(dl.selectByKey(this.t), [messageId, group]);
    return rows[0] ? toDeadLetterRow(rows[0]) : undefined;
  }

  async countDeadLetters(group?: string): Promise<Record<DeadLetterStatus, number>> {
    const byGroup = group !== undefined;
    return countsFromRows((await this.db.run(dl.countByStatus(this.t, byGroup), byGroup ? [group] : [])).rows);
  }

  /** In one READ COMMITTED transaction, so the range takes no gap locks that would stall new failures. */
  purgeSettledDeadLetters(before: number, limit: number): Promise<number> {
    const sql: SettledPurgeSql = {
      selectSettled: dl.selectSettled(this.t, this.prefix),
      deleteRows: (n) => dl.deleteByIds(this.t, n),
      deleteEvents: (n) => dl.deleteEvents(this.t, n),
      chunk: 500,
    };
    return this.db.ownTransaction((tx) => purgeSettledStepwise(tx, sql, before, limit));
  }

  /** Lock, update and record history in one READ COMMITTED transaction (MySQL has no data-modifying CTE). */
  protected transition(tr: DeadLetterTransition): Promise<number> {
    if (tr.ids.length === 0) return Promise.resolve(0);
    return this.db.ownTransaction((tx) => transitionDeadLetters(tx, adminDialect, this.t, tr));
  }

  /**
   * The upsert, then a read of the token it left: the affected-rows count cannot tell an inserted row
   * from an untouched one under the FOUND_ROWS flag, and a caller's pool may set either.
   */
  async raiseVersion(tx: SqlExecutor, g: VersionGuardKey, version: number): Promise<boolean> {
    let lock = raiseLocks.get(tx);
    if (!lock) raiseLocks.set(tx, (lock = new AsyncMutex()));
    const token = randomUUID();
    const key = [g.group, g.scope, g.key];
    return lock.run(async () => {
      await tx.query(guards.raiseVersion(this.t), [...key, version, token, version, token, version]);
      const { rows } = await tx.query<{ raised_by: string }>(guards.selectRaisedBy(this.t), key);
      return rows[0]?.raised_by === token;
    });
  }

  async guardedVersion(g: VersionGuardKey): Promise<number | undefined> {
    const { rows } = await this.db.run(guards.selectVersion(this.t), [g.group, g.scope, g.key]);
    return rows[0] ? Number(rows[0].version) : undefined;
  }
}
