import type { ClaimRequest, FailureUpdate, LockedBatch, OutboxRow } from '../../ports/outbox-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import type { TableNames } from '../sql/naming.js';
import { toOutboxRow } from '../sql/outbox-row.js';
import { HeldClient, isPipelined, pgCommit, pgExecutor, pgTransaction, type PgPoolLike } from './executor.js';
import * as sql from './outbox-sql.js';

/**
 * Claims due rows with `SELECT ... FOR UPDATE SKIP LOCKED` and keeps the transaction open while the
 * relay publishes them. Compared with a lease claim, nothing is written to claim a row (each message
 * costs one row update instead of two), rows in flight never sit in the next claim's index range, and
 * a relay that dies takes its claims with its connection. A hung relay's transaction is ended by the
 * server after `leaseMs` idle (idle_in_transaction_session_timeout).
 */
export async function claimLocked(
  pool: PgPoolLike,
  tables: TableNames,
  req: Omit<ClaimRequest, 'owner'>,
  wrapError: (err: unknown) => Error,
): Promise<LockedBatch> {
  let held: HeldClient;
  try {
    held = await HeldClient.from(pool);
  } catch (err) {
    throw wrapError(err);
  }
  const { client } = held;
  try {
    const begin = `BEGIN; ${sql.lockedClaimSettings(req.leaseMs)}`;
    const lock = sql.lockDueOutbox(tables, req.ordered);
    let rows: unknown[];
    if (isPipelined(client)) {
      // One round trip: the SELECT follows BEGIN unanswered. If BEGIN failed, the batch fails too, so
      // rows locked by a SELECT that ran outside a transaction are never published as claimed.
      [, { rows }] = await Promise.all([client.query(begin), client.query(lock, [req.now, req.limit])]);
    } else {
      await client.query(begin);
      ({ rows } = await client.query(lock, [req.now, req.limit]));
    }
    if (rows.length === 0) {
      await pgCommit(client);
      held.release();
      return EMPTY;
    }
    const claimed = (rows as Record<string, unknown>[]).map(toOutboxRow);
    return new PgLockedBatch(held, pool, tables, claimed, wrapError);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    held.release(err);
    throw wrapError(err);
  }
}

const EMPTY: LockedBatch = { rows: [], settle: async () => [], release: async () => undefined };

class PgLockedBatch implements LockedBatch {
  private held: HeldClient | undefined;

  constructor(
    held: HeldClient,
    private readonly pool: PgPoolLike,
    private readonly tables: TableNames,
    readonly rows: readonly OutboxRow[],
    private readonly wrapError: (err: unknown) => Error,
  ) {
    this.held = held;
  }

  /**
   * In the claim's transaction. If that transaction is gone (its connection died, or the server ended
   * it after `leaseMs` idle), the same writes go in a fresh transaction: a confirmed row is still
   * marked sent rather than published again, and failures still count toward backoff and dead. Rows
   * another relay took in between are safe: marks and failures touch only rows still pending.
   */
  async settle(sent: readonly number[], failures: readonly FailureUpdate[], now: number): Promise<readonly number[]> {
    const held = this.take();
    try {
      const recorded = await this.write(pgExecutor(held.client), sent, failures, now);
      await pgCommit(held.client);
      held.release();
      return recorded;
    } catch (err) {
      await held.client.query('ROLLBACK').catch(() => undefined);
      held.release(err);
    }
    try {
      return await pgTransaction(this.pool, async (tx) => {
        await tx.query(sql.CLAIM_PLAN_SETTINGS);
        return this.write(tx, sent, failures, now);
      });
    } catch (err) {
      throw this.wrapError(err);
    }
  }

  async release(): Promise<void> {
    if (!this.held) return;
    const held = this.take();
    try {
      await held.client.query('ROLLBACK');
      held.release();
    } catch (err) {
      held.release(err); // a dead connection: its locks are gone with it
    }
  }

  private async write(
    tx: SqlExecutor,
    sent: readonly number[],
    failures: readonly FailureUpdate[],
    now: number,
  ): Promise<number[]> {
    if (sent.length > 0) await tx.query(sql.markSent(this.tables), [sent, now]);
    const recorded: number[] = [];
    for (const f of failures) {
      const res =
        f.charged === false
          ? await tx.query(sql.recordInterruption(this.tables, false), sql.recordInterruptionValues(f, false))
          : await tx.query(sql.recordFailure(this.tables, false), sql.recordFailureValues(f, now));
      if (res.rowCount === 1) recorded.push(f.seq);
    }
    return recorded;
  }

  /** The connection, once: a batch is settled or released, never both. */
  private take(): HeldClient {
    const held = this.held;
    if (!held) throw new Error('locked batch already settled or released');
    this.held = undefined;
    return held;
  }
}
