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
import { adminDialect } from './admin-sql.js';
import * as dl from './dead-letter-sql.js';
import * as inbox from './inbox-sql.js';
import * as guards from './version-guard-sql.js';

/** How the consumer operations reach the store's Database; errors arrive as StoreError. */
export interface SqliteOwnConnection {
  /** One autocommit statement under the Database's in-process lock. */
  run(text: string, values?: readonly unknown[]): Promise<SqlResult>;
  /** A BEGIN IMMEDIATE transaction under the same lock. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/**
 * Inbox, dead letters and version guards on SQLite; SqliteOutboxStore delegates its ConsumerStore
 * methods here. recordInbox, recordFailure and raiseVersion run in the caller's transaction (which
 * holds the lock); everything else is one statement, or one transaction, under the lock. SQLite binds
 * no booleans, so poison travels as 0/1.
 */
export class SqliteConsumerOps extends StepwiseDeadLetters implements InboxStore, DeadLetterStore, VersionGuardStore {
  constructor(
    private readonly db: SqliteOwnConnection,
    private readonly t: TableNames,
    private readonly prefix: string,
  ) {
    super();
  }

  async recordInbox(tx: SqlExecutor, messageId: string, group: string, now: number): Promise<boolean> {
    return (await tx.query(inbox.insertInbox(this.t), [messageId, group, now])).rowCount === 1;
  }

  async recordInboxBatch(tx: SqlExecutor, ids: readonly string[], group: string, now: number): Promise<Set<string>> {
    const fresh = new Set<string>();
    // SQLite runs in-process: one statement per id costs no round trip.
    for (const id of ids) if (await this.recordInbox(tx, id, group, now)) fresh.add(id);
    return fresh;
  }

  async inboxRecordedAt(messageId: string, group: string): Promise<number | undefined> {
    const { rows } = await this.db.run(inbox.selectRecordedAt(this.t), [messageId, group]);
    return rows[0] ? Number(rows[0].recorded_at) : undefined;
  }

  /** Select, then delete each row by its rowid, in one transaction (see outbox-sql.ts on keys). */
  purgeInbox(before: number, limit: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: number }>(inbox.selectExpired(this.t, this.prefix), [before, limit]);
      let n = 0;
      for (const { id } of rows) n += (await tx.query(inbox.deleteRow(this.t), [id])).rowCount;
      return n;
    });
  }

  async recordDeliveryFailure(tx: SqlExecutor, f: FailureRecord, decide: DecideRetry): Promise<RecordedFailure> {
    const error = clipError(f.error);
    const { rows } = await tx.query<{ id: number; attempts: number }>(dl.upsertFailure(this.t), [
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
      f.poison ? 1 : 0,
      f.now,
      f.now,
    ]);
    return applyFailureDecision(tx, adminDialect, this.t, dl.applyDecision(this.t), rows[0]!, f, decide);
  }

  /** Select, then take each row by its id, in one transaction (see outbox-sql.ts on keys). */
  async claimDue(req: ClaimDueRequest): Promise<DeadLetterRow[]> {
    const rows = await this.db.transaction(async (tx) => {
      const due = await tx.query<{ id: number }>(dl.selectClaimable(this.t, this.prefix), [
        req.now,
        req.group,
        req.limit,
        req.now,
        req.group,
        req.limit,
        req.limit,
      ]);
      const taken: Record<string, unknown>[] = [];
      for (const { id } of due.rows) {
        taken.push(...(await tx.query(dl.claimRow(this.t), [req.owner, req.now + req.leaseMs, req.now, id])).rows);
      }
      return taken;
    });
    return rows.map(toDeadLetterRow).sort((a, b) => a.id - b.id);
  }

  async getDeadLetter(messageId: string, group: string): Promise<DeadLetterRow | undefined> {
    const { rows } = await this.db.run(dl.selectByKey(this.t), [messageId, group]);
    return rows[0] ? toDeadLetterRow(rows[0]) : undefined;
  }

  async countDeadLetters(group?: string): Promise<Record<DeadLetterStatus, number>> {
    const byGroup = group !== undefined;
    return countsFromRows((await this.db.run(dl.countByStatus(this.t, byGroup), byGroup ? [group] : [])).rows);
  }

  /** Select and delete in one transaction; in-process, the statements cost no round trips. */
  purgeSettledDeadLetters(before: number, limit: number): Promise<number> {
    const sql: SettledPurgeSql = {
      selectSettled: dl.selectSettled(this.t, this.prefix),
      deleteRows: () => dl.deleteById(this.t),
      deleteEvents: () => dl.deleteEvents(this.t, this.prefix),
      chunk: 1,
    };
    return this.db.transaction((tx) => purgeSettledStepwise(tx, sql, before, limit));
  }

  /**
   * Update and history row in one transaction, one id at a time (a list of ids may be planned as a
   * table scan, see outbox-sql.ts); in-process, the statements cost no round trips.
   */
  protected transition(tr: DeadLetterTransition): Promise<number> {
    if (tr.ids.length === 0) return Promise.resolve(0);
    return this.db.transaction(async (tx) => {
      let n = 0;
      for (const id of tr.ids) n += await transitionDeadLetters(tx, adminDialect, this.t, { ...tr, ids: [id] });
      return n;
    });
  }

  async raiseVersion(tx: SqlExecutor, g: VersionGuardKey, version: number): Promise<boolean> {
    return (await tx.query(guards.raiseVersion(this.t), [g.group, g.scope, g.key, version])).rowCount === 1;
  }

  async guardedVersion(g: VersionGuardKey): Promise<number | undefined> {
    const { rows } = await this.db.run(guards.selectVersion(this.t), [g.group, g.scope, g.key]);
    return rows[0] ? Number(rows[0].version) : undefined;
  }
}
