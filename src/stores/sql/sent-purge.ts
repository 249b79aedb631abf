import { StoreError } from '../../core/errors.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';

/** A dialect's statements for {@link purgeSentStepwise}; placeholders are `?`. */
export interface SentPurgeSql {
  /** ? before, ? limit: seq and message_id of sent rows older than `before`, oldest first, locked for the transaction. */
  readonly selectSent: string;
  /** `count` seqs: the outbox rows. */
  deleteRows(count: number): string;
  /** `count` message ids: their attempt history. */
  deleteAttempts(count: number): string;
  /**
   * Keys per DELETE: up to 500 (well under every driver's limit on bound values), or 1 where the
   * planner may scan the table rather than look up a list of keys (SQLite, see its outbox-sql.ts).
   */
  readonly chunk: number;
}

/**
 * Deletes at most `limit` sent rows older than `before` and their attempt history in `tx`, a
 * transaction of the store's own: select and lock, then delete by key, each statement on an index
 * (MySQL and SQLite; PostgreSQL does it in one statement). Returns how many rows went.
 */
export async function purgeSentStepwise(
  tx: SqlExecutor,
  sql: SentPurgeSql,
  before: number,
  limit: number,
): Promise<number> {
  const { rows } = await tx.query<{ seq: unknown; message_id: unknown }>(sql.selectSent, [before, limit]);
  for (let i = 0; i < rows.length; i += sql.chunk) {
    const chunk = rows.slice(i, i + sql.chunk);
    const deleted = await tx.query(
      sql.deleteRows(chunk.length),
      chunk.map((r) => Number(r.seq)),
    );
    // The rows are locked (or the transaction is exclusive): nothing can have moved them.
    if (deleted.rowCount !== chunk.length) throw new StoreError('a sent-row purge lost rows it had locked');
    await tx.query(
      sql.deleteAttempts(chunk.length),
      chunk.map((r) => String(r.message_id)),
    );
  }
  return rows.length;
}
