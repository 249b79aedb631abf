import { createHash } from 'node:crypto';
import { isMessageId, type Envelope } from '../core/envelope.js';
import { describeError, PoisonMessageError, TransactionAbortedError } from '../core/errors.js';
import { runScoped } from '../core/scoped-work.js';
import { decodeEnvelope, WIRE_HEADERS } from '../core/wire.js';
import type { FailureRecord } from '../ports/consumer-store.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import { decideRetry, type ResolvedConsumerOptions } from './consumer-options.js';
import { ConsumerStoreUnavailableError, PermanentError } from './errors.js';
import { exhaustedError } from './exhausted.js';
import type { HandlerRegistry, Resolved } from './handler-registry.js';
import { HandlerFailed, runHandlers } from './optimistic-run.js';
import { versionGuard } from './version-guard.js';
import type { Outcome, WorkItem } from './work-item.js';

export type { Outcome, WorkItem } from './work-item.js';

/**
 * Handles a batch in ONE transaction of the consumer's database: the inbox records (message id,
 * group) and the handlers' writes commit together. Optimistically first (one inbox statement, no
 * savepoints); if a handler fails, the batch runs again with a savepoint per message so the failure
 * rolls back only itself. Handlers before the failing one therefore run twice (their writes in `tx`
 * count once): keep every effect in `tx`. Throws ConsumerStoreUnavailableError when the database
 * itself fails, so the caller acks nothing and retries the batch later. A delivery the broker gave
 * up on (`exhausted`) is recorded as a dead letter without running its handler.
 */
export class BatchProcessor {
  constructor(
    private readonly options: ResolvedConsumerOptions,
    private readonly registry: HandlerRegistry,
  ) {}

  async process(items: readonly WorkItem[]): Promise<Outcome[]> {
    const { store, clock } = this.options;
    try {
      const handled = await this.handledBefore(items);
      // Most batches have no failure: one inbox statement for the batch, no savepoints.
      const fast = await this.processOptimistically(items, handled);
      if (Array.isArray(fast)) return fast;
      // Again under savepoints. A handler that failed alone is not run twice: its failure is recorded as is.
      return await store.transaction(async (tx) => {
        const outcomes: Outcome[] = [];
        for (const [index, item] of items.entries()) {
          outcomes.push(
            index === fast.index
              ? await this.failKnown(tx, item, fast.error, clock.now())
              : await this.processOne(tx, item, clock.now(), handled),
          );
        }
        return outcomes;
      });
    } catch (err) {
      throw new ConsumerStoreUnavailableError({ cause: err });
    }
  }

  /**
   * Records the whole batch in the inbox with one statement and runs the handlers without
   * savepoints. If a handler or a statement fails, everything is rolled back and the result tells
   * the caller to run the batch again message by message under savepoints (with the one failure
   * already known, if there is exactly one).
   */
  private async processOptimistically(
    items: readonly WorkItem[],
    handled: ReadonlySet<string>,
  ): Promise<Outcome[] | { readonly index: number | undefined; readonly error: unknown }> {
    const { store, clock, group } = this.options;
    const now = clock.now();
    try {
      return await store.transaction(async (tx) => {
        const outcomes: Outcome[] = new Array(items.length);
        const runnable: { index: number; item: WorkItem; resolved: Resolved }[] = [];
        for (const [index, item] of items.entries()) {
          if (item.exhausted) {
            outcomes[index] = await this.park(tx, item, now, handled);
            continue;
          }
          try {
            runnable.push({ index, item, resolved: this.registry.resolve(decodeEnvelope(item.message)) });
          } catch (err) {
            if (!(err instanceof PoisonMessageError)) throw err;
            outcomes[index] = await this.fail(tx, item, err, now, { permanent: true, poison: true });
          }
        }
        const fresh = await store.inbox.recordInboxBatch(
          tx,
          [...new Set(runnable.map((r) => r.item.message.id))],
          group,
          now,
        );
        await runHandlers(tx, runnable, fresh, outcomes, this.options);
        return outcomes;
      });
    } catch (err) {
      if (err instanceof HandlerFailed) return { index: err.index, error: err.cause };
      // COMMIT found the transaction aborted by a failed statement no handler reported: run all again alone.
      if (err instanceof TransactionAbortedError) return { index: undefined, error: err };
      throw err;
    }
  }

  /** Records the failure the optimistic pass saw, without running the handler again. */
  private async failKnown(tx: SqlExecutor, item: WorkItem, error: unknown, now: number): Promise<Outcome> {
    const { envelope } = this.registry.resolve(decodeEnvelope(item.message));
    return this.fail(tx, item, error, now, { permanent: error instanceof PermanentError, poison: false }, envelope);
  }

  /**
   * Ids of the batch's exhausted deliveries that the group's inbox already holds: handled before
   * (a duplicate copy was parked), so they are only acked. Read before the transaction; a copy
   * handled meanwhile makes a dead letter that its replay finds in the inbox and resolves.
   */
  private async handledBefore(items: readonly WorkItem[]): Promise<ReadonlySet<string>> {
    const ids = [...new Set(items.filter((i) => i.exhausted).map((i) => i.message.id))];
    const handled = new Set<string>();
    for (const id of ids)
      if ((await this.options.store.inbox.inboxRecordedAt(id, this.options.group)) !== undefined) handled.add(id);
    return handled;
  }

  /**
   * Records a message the broker gave up on, in `tx`, without running its handler: with the
   * dead-letter table as pending on the retry schedule (a crash loop or an outage is not the
   * handler's verdict), with broker retries as dead (the broker's retries are spent).
   */
  private async park(tx: SqlExecutor, item: WorkItem, now: number, handled: ReadonlySet<string>): Promise<Outcome> {
    if (handled.has(item.message.id)) return { kind: 'duplicate' };
    let envelope: Envelope;
    try {
      envelope = this.registry.resolve(decodeEnvelope(item.message)).envelope;
    } catch (err) {
      if (!(err instanceof PoisonMessageError)) throw err;
      return this.fail(tx, item, err, now, { permanent: true, poison: true });
    }
    const error = exhaustedError(item.exhausted!);
    return this.fail(tx, item, error, now, { permanent: false, poison: false }, envelope);
  }

  private async processOne(
    tx: SqlExecutor,
    item: WorkItem,
    now: number,
    handled: ReadonlySet<string>,
  ): Promise<Outcome> {
    const { group } = this.options;
    if (item.exhausted) return this.park(tx, item, now, handled);
    let resolved: Resolved;
    try {
      resolved = this.registry.resolve(decodeEnvelope(item.message));
    } catch (err) {
      if (!(err instanceof PoisonMessageError)) throw err;
      return this.fail(tx, item, err, now, { permanent: true, poison: true });
    }
    await tx.query('SAVEPOINT surety_msg');
    if (!(await this.options.store.inbox.recordInbox(tx, item.message.id, group, now))) {
      await tx.query('RELEASE SAVEPOINT surety_msg');
      return { kind: 'duplicate' };
    }
    try {
      // Statements the handler issues after it settled would follow ROLLBACK TO SAVEPOINT: refused.
      await runScoped(tx, (scoped) =>
        resolved.handler(resolved.envelope.payload, {
          tx: scoped,
          envelope: resolved.envelope,
          group,
          replay: item.replay,
          versions: versionGuard(this.options.store.versionGuards, group, scoped),
        }),
      );
    } catch (handlerError) {
      // If the rollback itself fails the transaction is gone: that is the database, not the handler.
      await tx.query('ROLLBACK TO SAVEPOINT surety_msg');
      return this.fail(
        tx,
        item,
        handlerError,
        now,
        { permanent: handlerError instanceof PermanentError, poison: false },
        resolved.envelope,
      );
    }
    try {
      await tx.query('RELEASE SAVEPOINT surety_msg');
    } catch (err) {
      if (!abortedBefore(err)) throw err;
      // The handler returned, but one of its statements failed and it caught the error: PostgreSQL
      // has aborted the savepoint, so its writes are gone. A failure like any other, never an ack.
      await tx.query('ROLLBACK TO SAVEPOINT surety_msg');
      const swallowed = new Error(
        'the handler returned normally, but a statement it ran had failed and its error was caught; PostgreSQL aborted its writes (SQLSTATE 25P02). Let the error propagate, or wrap the statement in its own SAVEPOINT',
        { cause: err },
      );
      return this.fail(tx, item, swallowed, now, { permanent: false, poison: false }, resolved.envelope);
    }
    return { kind: 'handled' };
  }

  private async fail(
    tx: SqlExecutor,
    item: WorkItem,
    err: unknown,
    now: number,
    how: { permanent: boolean; poison: boolean },
    envelope?: Envelope,
  ): Promise<Outcome> {
    const error = describeError(err);
    const { retry } = this.options;
    // Poison always lands in the table: the broker cannot fix an undecodable body either. Nor can
    // it retry a message it has given up on.
    if (item.replay || (retry.kind === 'broker' && !how.poison && !item.exhausted))
      return { kind: 'failed', error, permanent: how.permanent };
    const failure = failureRecord(item, this.options.group, error, how.poison, now, envelope);
    const recorded = await this.options.store.deadLetters.recordDeliveryFailure(tx, failure, (attempts) =>
      how.permanent || retry.kind === 'broker'
        ? { status: 'dead', nextRetryAt: null }
        : decideRetry(retry, attempts, now),
    );
    return { kind: 'recorded', failure: recorded, error };
  }
}

/** What the dead-letter table keeps of a message: enough to replay it byte for byte. */
export function failureRecord(
  item: WorkItem,
  group: string,
  error: string,
  poison: boolean,
  now: number,
  envelope?: Envelope,
): FailureRecord {
  const h = item.message.headers;
  const text = item.message.body.toString('utf8');
  const utf8 = Buffer.from(text, 'utf8').equals(item.message.body);
  const version = Number(h[WIRE_HEADERS.version]);
  const headers: Record<string, string> = { ...h };
  let messageId = String(item.message.id ?? '');
  if (!isMessageId(messageId)) {
    // The unique key needs a UUID: derive a stable one, so redeliveries of the same bytes meet one row.
    headers['surety-original-id'] = messageId;
    const hex = createHash('sha256').update(messageId).update('\0').update(item.message.body).digest('hex');
    messageId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  }
  return {
    messageId,
    group,
    topic: item.topic,
    type: envelope?.type ?? h[WIRE_HEADERS.type] ?? '',
    key: envelope?.key ?? h[WIRE_HEADERS.key] ?? '',
    version: Number.isInteger(version) ? version : 0,
    headers,
    body: utf8 ? text : item.message.body.toString('base64'),
    bodyEncoding: utf8 ? 'utf8' : 'base64',
    error,
    poison,
    now,
  };
}

/** The store refused the statement because an earlier one in the transaction failed (PostgreSQL). */
function abortedBefore(err: unknown): boolean {
  return err instanceof TransactionAbortedError;
}
