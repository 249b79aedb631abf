import type { VersionGuardKey, VersionGuardStore } from '../../ports/consumer-store.js';
import type { SqlExecutor } from '../../ports/sql-executor.js';
import { AsyncMutex } from './async-mutex.js';
import { runIn, type HotStatement, type OwnConnection } from './own-connection.js';
import type { Statement } from './sql-dialect.js';

/** A dialect's version-guard statements, placeholders its own. */
export interface VersionGuardStatements {
  /**
   * Raises the guard when it has none or a lower version. Without `readBack`, `rowCount` 1 says it
   * did. With it (MySQL, whose affected-rows count cannot tell an inserted row from an untouched one
   * under the FOUND_ROWS flag), the raise leaves `token` on a row it raised, and `readBack` returns
   * the row's `raised_by`, which the transaction sees as its own write.
   */
  raise(
    guard: VersionGuardKey,
    version: number,
  ): {
    readonly write: HotStatement;
    readonly readBack?: { readonly statement: Statement; readonly token: string };
  };
  selectVersion(guard: VersionGuardKey): Statement;
}

/** Per transaction: a raise and its read-back must not interleave with another raise's (handlers at once). */
const raiseLocks = new WeakMap<SqlExecutor, AsyncMutex>();

function lockOf(tx: SqlExecutor): AsyncMutex {
  let lock = raiseLocks.get(tx);
  if (!lock) raiseLocks.set(tx, (lock = new AsyncMutex()));
  return lock;
}

/** The version-guard concern of every SQL store, given the dialect's statements and the store's connection. */
export function createVersionGuardStore(db: OwnConnection, sql: VersionGuardStatements): VersionGuardStore {
  return {
    async raiseVersion(tx, guard, version) {
      const { write, readBack } = sql.raise(guard, version);
      if (!readBack) return (await runIn(tx, write)).rowCount === 1;
      return lockOf(tx).run(async () => {
        await runIn(tx, write);
        const { rows } = await runIn<{ raised_by: string }>(tx, readBack.statement);
        return rows[0]?.raised_by === readBack.token;
      });
    },

    async guardedVersion(guard) {
      const s = sql.selectVersion(guard);
      const { rows } = await db.run(s.text, s.values);
      return rows[0] ? Number(rows[0].version) : undefined;
    },
  };
}
