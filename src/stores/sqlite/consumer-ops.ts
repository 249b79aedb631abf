import type {
  DeadLetterRow,
  DeadLetterStatus,
  DeadLetterStore,
  FailureRecord,
  InboxStore,
  RecordedFailure,
} from '../../ports/consumer-store.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import {
  countsFromRows,
  toDeadLetterRow,
  type ClaimDueRequest,
  type DecideRetry,
  type RescheduleUpdate,
} from '../shared/dead-letter-row.js';
import type { TableNames } from '../shared/naming.js';
import { clipError } from '../shared/outbox-row.js';
import * as dl from './dead-letter-sql.js';
import * as inbox from './inbox-sql.js';

/** How the consumer operations reach the store's Database; errors arrive as StoreError. */
export interface SqliteOwnConnection {
  /** One autocommit statement under the Database's in-process lock. */
  run(text: string, values?: unknown[]): Promise<SqlResult>;
}

/**
 * Inbox and dead letters on SQLite; SqliteOutboxStore delegates its ConsumerStore methods here.
 * recordInbox and recordFailure run in the caller's transaction (which holds the lock); everything
 * else is one statement under the lock. SQLite binds no booleans, so poison travels as 0/1.
 */
export class SqliteConsumerOps implements InboxStore, DeadLetterStore {
  constructor(
    private readonly db: SqliteOwnConnection,
    private readonly t: TableNames,
    private readonly prefix: string,
  ) {}

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

  async purgeInbox(before: number, limit: number): Promise<number> {
    return (await this.db.run(inbox.purgeInbox(this.t), [before, limit])).rowCount;
  }

  async recordDeliveryFailure(tx: SqlExecutor, f: FailureRecord, decide: DecideRetry): Promise<RecordedFailure> {
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
      clipError(f.error),
      f.poison ? 1 : 0,
      f.now,
      f.now,
    ]);
    const id = Number(rows[0]!.id);
    const attempts = Number(rows[0]!.attempts);
    const { status, nextRetryAt } = decide(attempts);
    await tx.query(dl.applyDecision(this.t), [status, nextRetryAt, f.now, id]);
    return { id, attempts, status, nextRetryAt };
  }

  async claimDue(req: ClaimDueRequest): Promise<DeadLetterRow[]> {
    const { rows } = await this.db.run(dl.claimDue(this.t, this.prefix), [
      req.owner,
      req.now + req.leaseMs,
      req.now,
      req.now,
      req.group,
      req.limit,
      req.now,
      req.group,
      req.limit,
      req.limit,
    ]);
    return rows.map(toDeadLetterRow).sort((a, b) => a.id - b.id);
  }

  async markResolved(id: number, owner: string, now: number): Promise<boolean> {
    return (await this.db.run(dl.markResolved(this.t), [now, id, owner])).rowCount === 1;
  }

  async markResolvedMany(ids: readonly number[], owner: string, now: number): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.db.run(dl.markResolvedMany(this.t, ids.length), [now, ...ids, owner])).rowCount;
  }

  async reschedule(u: RescheduleUpdate): Promise<boolean> {
    const res = await this.db.run(dl.reschedule(this.t), [
      u.attempts,
      u.decision.status,
      u.decision.nextRetryAt,
      clipError(u.error),
      u.now,
      u.id,
      u.owner,
    ]);
    return res.rowCount === 1;
  }

  async ignore(id: number, reason: string, now: number): Promise<boolean> {
    return (await this.db.run(dl.ignore(this.t), [reason, now, id])).rowCount === 1;
  }

  async getDeadLetter(messageId: string, group: string): Promise<DeadLetterRow | undefined> {
    const { rows } = await this.db.run(dl.selectByKey(this.t), [messageId, group]);
    return rows[0] ? toDeadLetterRow(rows[0]) : undefined;
  }

  async countDeadLetters(group?: string): Promise<Record<DeadLetterStatus, number>> {
    const byGroup = group !== undefined;
    return countsFromRows((await this.db.run(dl.countByStatus(this.t, byGroup), byGroup ? [group] : [])).rows);
  }
}
