import type { InboxStore } from '../../ports/consumer-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { runIn, type HotStatement, type OwnConnection } from './own-connection.js';
import type { Statement } from './sql-dialect.js';

/** A dialect's inbox statements, placeholders its own; what differs between dialects is said by which are given. */
export interface InboxStatements {
  /** Records one message; `rowCount` 1 when new. */
  insert(messageId: string, group: string, now: number): HotStatement;
  /**
   * Where the insert fails on a duplicate instead of inserting nothing (MySQL): the error that says
   * so. The failed statement alone is rolled back, so the caller's transaction goes on.
   */
  isDuplicate?(err: unknown): boolean;
  /**
   * Many messages in one statement: `returning`, it returns the new ids (`message_id`); `allOrNone`,
   * it fails as a whole on any duplicate and the ids are then recorded one by one. Without it, one
   * statement per id (in-process SQLite pays no round trip for it).
   */
  readonly insertMany?: {
    readonly mode: 'returning' | 'allOrNone';
    statement(messageIds: readonly string[], group: string, now: number): HotStatement;
  };
  selectRecordedAt(messageId: string, group: string): Statement;
  /**
   * Deletes the oldest rows recorded before `before`: one range statement (`rowCount` deleted), or
   * `stepwise`, a select of row ids (`id`) and one delete each in a transaction of the store's own.
   */
  readonly purge:
    | { readonly mode: 'one'; statement(before: number, limit: number): Statement }
    | {
        readonly mode: 'stepwise';
        select(before: number, limit: number): Statement;
        deleteRow(id: unknown): Statement;
      };
}

/** The inbox concern of every SQL store, given the dialect's statements and the store's connection. */
export function createInboxStore(db: OwnConnection, sql: InboxStatements): InboxStore {
  async function recordInbox(tx: SqlExecutor, messageId: string, group: string, now: number): Promise<boolean> {
    try {
      return (await runIn(tx, sql.insert(messageId, group, now))).rowCount === 1;
    } catch (err) {
      if (sql.isDuplicate?.(err)) return false;
      throw err;
    }
  }

  async function oneByOne(tx: SqlExecutor, ids: readonly string[], group: string, now: number) {
    const fresh = new Set<string>();
    for (const id of ids) if (await recordInbox(tx, id, group, now)) fresh.add(id);
    return fresh;
  }

  return {
    recordInbox,

    async recordInboxBatch(tx, ids, group, now) {
      const many = sql.insertMany;
      if (!many || ids.length === 0) return oneByOne(tx, ids, group, now);
      if (many.mode === 'returning') {
        const { rows } = await runIn<{ message_id: string }>(tx, many.statement(ids, group, now));
        return new Set(rows.map((r) => r.message_id));
      }
      try {
        await runIn(tx, many.statement(ids, group, now));
        return new Set(ids);
      } catch (err) {
        // Rare (a redelivery): the statement alone was undone.
        if (!sql.isDuplicate?.(err)) throw err;
      }
      return oneByOne(tx, ids, group, now);
    },

    async inboxRecordedAt(messageId, group) {
      const s = sql.selectRecordedAt(messageId, group);
      const { rows } = await db.run(s.text, s.values);
      return rows[0] ? Number(rows[0].recorded_at) : undefined;
    },

    async purgeInbox(before, limit) {
      const purge = sql.purge;
      if (purge.mode === 'one') {
        const s = purge.statement(before, limit);
        return (await db.runRange(s.text, s.values)).rowCount;
      }
      return db.transaction(async (tx) => {
        const select = purge.select(before, limit);
        const { rows } = await tx.query<{ id: unknown }>(select.text, select.values);
        let n = 0;
        for (const { id } of rows) n += (await runIn(tx, purge.deleteRow(id))).rowCount;
        return n;
      });
    },
  };
}
