import type { ClaimRequest, FailureUpdate, LockedBatch, OutboxRow } from '../../ports/outbox-store.js';
import type { TableNames } from '../shared/naming.js';
import { clipError, toOutboxRow } from '../shared/outbox-row.js';
import type { PgPoolClient, PgPoolLike, PgQueryable } from './executor.js';
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
  let client: PgPoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw wrapError(err);
  }
  try {
    await client.query(`BEGIN; ${sql.lockedClaimSettings(req.leaseMs)}`);
    const { rows } = await client.query(sql.lockDueOutbox(tables, req.ordered), [req.now, req.limit]);
    if (rows.length === 0) {
      await client.query('COMMIT');
      client.release();
      return EMPTY;
    }
    return new PgLockedBatch(client, tables, (rows as Record<string, unknown>[]).map(toOutboxRow), wrapError);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(err instanceof Error ? err : true);
    throw wrapError(err);
  }
}

const EMPTY: LockedBatch = { rows: [], settle: async () => undefined, release: async () => undefined };

class PgLockedBatch implements LockedBatch {
  private client: PgPoolClient | undefined;
  // The connection can die while the relay awaits confirms (server restart, idle timeout): pg then
  // emits `error` on the held client, which must be heard; the next statement fails and says why.
  private readonly onConnectionError = () => undefined;

  constructor(
    client: PgPoolClient,
    private readonly tables: TableNames,
    readonly rows: readonly OutboxRow[],
    private readonly wrapError: (err: unknown) => Error,
  ) {
    this.client = client;
    client.on?.('error', this.onConnectionError);
  }

  async settle(sent: readonly number[], failures: readonly FailureUpdate[], now: number): Promise<void> {
    const client = this.take();
    try {
      if (sent.length > 0) await client.query(sql.markSent(this.tables), [sent, now]);
      for (const f of failures) await recordFailure(client, this.tables, f, now);
      await client.query('COMMIT');
      client.release();
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(err instanceof Error ? err : true);
      throw this.wrapError(err);
    }
  }

  async release(): Promise<void> {
    if (!this.client) return;
    const client = this.take();
    try {
      await client.query('ROLLBACK');
      client.release();
    } catch (err) {
      client.release(err instanceof Error ? err : true); // a dead connection: its locks are gone with it
    }
  }

  /** The connection, once: a batch is settled or released, never both. */
  private take(): PgPoolClient {
    const client = this.client;
    if (!client) throw new Error('locked batch already settled or released');
    this.client = undefined;
    client.off?.('error', this.onConnectionError);
    return client;
  }
}

async function recordFailure(client: PgQueryable, tables: TableNames, f: FailureUpdate, now: number): Promise<void> {
  await client.query(sql.recordFailure(tables, false), [
    f.seq,
    f.owner,
    f.attempts,
    f.nextAttemptAt,
    f.dead ? 'dead' : 'pending',
    clipError(f.error),
    f.now ?? now,
  ]);
}
