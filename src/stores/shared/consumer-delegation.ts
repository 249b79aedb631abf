import type {
  DeadLetterRow,
  DeadLetterStatus,
  DeadLetterStore,
  FailureRecord,
  InboxStore,
  RecordedFailure,
  RetryDecision,
  VersionGuardKey,
  VersionGuardStore,
} from '../../ports/consumer-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';

type ConsumerOps = InboxStore & DeadLetterStore & VersionGuardStore;

/**
 * The inbox, dead-letter and version-guard half of every store, forwarded to the dialect's
 * `consumer-ops.ts`, so the store classes carry only their outbox code and connection handling.
 */
export abstract class ConsumerDelegation implements ConsumerOps {
  protected abstract readonly consumer: ConsumerOps;

  recordInbox(tx: SqlExecutor, messageId: string, group: string, now: number): Promise<boolean> {
    return this.consumer.recordInbox(tx, messageId, group, now);
  }
  recordInboxBatch(tx: SqlExecutor, messageIds: readonly string[], group: string, now: number): Promise<Set<string>> {
    return this.consumer.recordInboxBatch(tx, messageIds, group, now);
  }
  inboxRecordedAt(messageId: string, group: string): Promise<number | undefined> {
    return this.consumer.inboxRecordedAt(messageId, group);
  }
  purgeInbox(before: number, limit: number): Promise<number> {
    return this.consumer.purgeInbox(before, limit);
  }
  recordDeliveryFailure(
    tx: SqlExecutor,
    failure: FailureRecord,
    decide: (attempts: number) => RetryDecision,
  ): Promise<RecordedFailure> {
    return this.consumer.recordDeliveryFailure(tx, failure, decide);
  }
  claimDue(request: Parameters<DeadLetterStore['claimDue']>[0]): Promise<DeadLetterRow[]> {
    return this.consumer.claimDue(request);
  }
  markResolved(id: number, owner: string, now: number): Promise<boolean> {
    return this.consumer.markResolved(id, owner, now);
  }
  markResolvedMany(ids: readonly number[], owner: string, now: number): Promise<number> {
    return this.consumer.markResolvedMany(ids, owner, now);
  }
  reschedule(update: Parameters<DeadLetterStore['reschedule']>[0]): Promise<boolean> {
    return this.consumer.reschedule(update);
  }
  ignore(id: number, reason: string, now: number): Promise<boolean> {
    return this.consumer.ignore(id, reason, now);
  }
  getDeadLetter(messageId: string, group: string): Promise<DeadLetterRow | undefined> {
    return this.consumer.getDeadLetter(messageId, group);
  }
  countDeadLetters(group?: string): Promise<Record<DeadLetterStatus, number>> {
    return this.consumer.countDeadLetters(group);
  }
  purgeSettledDeadLetters(before: number, limit: number): Promise<number> {
    return this.consumer.purgeSettledDeadLetters(before, limit);
  }
  raiseVersion(tx: SqlExecutor, guard: VersionGuardKey, version: number): Promise<boolean> {
    return this.consumer.raiseVersion(tx, guard, version);
  }
  guardedVersion(guard: VersionGuardKey): Promise<number | undefined> {
    return this.consumer.guardedVersion(guard);
  }
}
