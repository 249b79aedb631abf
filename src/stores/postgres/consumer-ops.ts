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
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { ignoreTransition, transitionDeadLetters } from '../sql/dead-letter-transition.js';
import {
  countsFromRows,
  toDeadLetterRow,
  type ClaimDueRequest,
  type DecideRetry,
  type RescheduleUpdate,
} from '../sql/dead-letter-row.js';
import type { TableNames } from '../sql/naming.js';
import { clipError } from '../sql/outbox-row.js';
import { adminDialect } from './admin-sql.js';
import * as dl from './dead-letter-sql.js';
import { statementName } from './executor.js';
import * as inbox from './inbox-sql.js';
import * as guards from './version-guard-sql.js';

type Rows = { rows: Record<string, unknown>[]; rowCount: number };

/** How the consumer operations reach the store's own pool; errors arrive as StoreError. */
export interface PgOwnConnection {
  /** One statement, prepared once per connection, in autocommit. */
  run(text: string, values?: unknown[]): Promise<Rows>;
  /** One statement in a transaction whose planner may not fall back to scans (CLAIM_PLAN_SETTINGS). */
  runForcedPlan(text: string, values: unknown[]): Promise<Rows>;
  /** A transaction on one pooled connection. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** Inbox, dead letters and version guards on PostgreSQL; PostgresOutboxStore delegates its consumer methods here. */
export class PostgresConsumerOps implements InboxStore, DeadLetterStore, VersionGuardStore {
  constructor(
    private readonly db: PgOwnConnection,
    private readonly t: TableNames,
  ) {}

  async recordInbox(tx: SqlExecutor, messageId: string, group: string, now: number): Promise<boolean> {
    // Runs once per consumed message: prepared once per connection where the executor honours the hint.
    const text = inbox.insertInbox(this.t);
    const res = await tx.query(text, [messageId, group, now], { name: statementName(text) });
    return res.rowCount === 1;
  }

  async recordInboxBatch(tx: SqlExecutor, ids: readonly string[], group: string, now: number): Promise<Set<string>> {
    const text = inbox.insertInboxBatch(this.t);
    const { rows } = await tx.query<{ message_id: string }>(text, [ids, group, now], { name: statementName(text) });
    return new Set(rows.map((r) => r.message_id));
  }

  async inboxRecordedAt(messageId: string, group: string): Promise<number | undefined> {
    const { rows } = await this.db.run(inbox.selectRecordedAt(this.t), [messageId, group]);
    return rows[0] ? Number(rows[0].recorded_at) : undefined;
  }

  async purgeInbox(before: number, limit: number): Promise<number> {
    return (await this.db.runForcedPlan(inbox.purgeInbox(this.t), [before, limit])).rowCount;
  }

  async recordDeliveryFailure(tx: SqlExecutor, f: FailureRecord, decide: DecideRetry): Promise<RecordedFailure> {
    const error = clipError(f.error);
    const { rows } = await tx.query<{ id: string; attempts: number }>(dl.upsertFailure(this.t), [
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
    ]);
    const id = Number(rows[0]!.id);
    const attempts = Number(rows[0]!.attempts);
    const { status, nextRetryAt } = decide(attempts);
    await tx.query(dl.applyDecision(this.t), [id, status, nextRetryAt, f.now, error]);
    return { id, attempts, status, nextRetryAt };
  }

  async claimDue(req: ClaimDueRequest): Promise<DeadLetterRow[]> {
    const { rows } = await this.db.runForcedPlan(dl.claimDue(this.t), [
      req.now,
      req.limit,
      req.owner,
      req.now + req.leaseMs,
      req.group,
    ]);
    return rows.map(toDeadLetterRow).sort((a, b) => a.id - b.id);
  }

  async markResolved(id: number, owner: string, now: number): Promise<boolean> {
    return (await this.db.run(dl.markResolved(this.t), [id, owner, now])).rowCount === 1;
  }

  async markResolvedMany(ids: readonly number[], owner: string, now: number): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.db.run(dl.markResolvedMany(this.t), [ids, owner, now])).rowCount;
  }

  async reschedule(u: RescheduleUpdate): Promise<boolean> {
    const res = await this.db.run(dl.reschedule(this.t), [
      u.id,
      u.owner,
      u.attempts,
      u.decision.status,
      u.decision.nextRetryAt,
      clipError(u.error),
      u.now,
    ]);
    return res.rowCount === 1;
  }

  async ignore(id: number, reason: string, now: number): Promise<boolean> {
    const changed = await this.db.transaction((tx) =>
      transitionDeadLetters(tx, adminDialect, this.t, ignoreTransition([id], reason, null, now)),
    );
    return changed === 1;
  }

  async getDeadLetter(messageId: string, group: string): Promise<DeadLetterRow | undefined> {
    const { rows } = await this.db.run(dl.selectByKey(this.t), [messageId, group]);
    return rows[0] ? toDeadLetterRow(rows[0]) : undefined;
  }

  async countDeadLetters(group?: string): Promise<Record<DeadLetterStatus, number>> {
    const byGroup = group !== undefined;
    return countsFromRows((await this.db.run(dl.countByStatus(this.t, byGroup), byGroup ? [group] : [])).rows);
  }

  async purgeSettledDeadLetters(before: number, limit: number): Promise<number> {
    const { rows } = await this.db.runForcedPlan(dl.purgeSettled(this.t), [before, limit]);
    return Number(rows[0]!.n);
  }

  async raiseVersion(tx: SqlExecutor, g: VersionGuardKey, version: number): Promise<boolean> {
    const text = guards.raiseVersion(this.t);
    const res = await tx.query(text, [g.group, g.scope, g.key, version], { name: statementName(text) });
    return res.rowCount === 1;
  }

  async guardedVersion(g: VersionGuardKey): Promise<number | undefined> {
    const { rows } = await this.db.run(guards.selectVersion(this.t), [g.group, g.scope, g.key]);
    return rows[0] ? Number(rows[0].version) : undefined;
  }
}
