import type { QueryHints, SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import type { Statement } from './sql-dialect.js';

/** How the shared concern objects reach a store's own connection; errors arrive as StoreError. */
export interface OwnConnection {
  /** One statement in autocommit. */
  run(text: string, values?: readonly unknown[]): Promise<SqlResult>;
  /**
   * One statement over a range of rows (a claim or a purge): PostgreSQL forbids its planner the
   * scans stale statistics can choose, MySQL runs it in READ COMMITTED so it takes no gap locks.
   */
  runRange(text: string, values: readonly unknown[]): Promise<SqlResult>;
  /** A transaction of the store's own (MySQL: READ COMMITTED; SQLite: BEGIN IMMEDIATE). */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** A range operation a dialect does in one statement, or (`stepwise`) in steps of its own kind. */
export type OneOrStepwise<Q, S> =
  { readonly mode: 'one'; statement(req: Q): Statement } | ({ readonly mode: 'stepwise' } & S);

/** Runs `op`: its one statement with `runRange`, or `steps` in a transaction of the store's own. Returns the rows. */
export async function rangeRows<Q, S>(
  db: OwnConnection,
  op: OneOrStepwise<Q, S>,
  req: Q,
  steps: (tx: SqlExecutor, op: S, req: Q) => Promise<Record<string, unknown>[]>,
): Promise<Record<string, unknown>[]> {
  if (op.mode === 'stepwise') return db.transaction((tx) => steps(tx, op, req));
  const s = op.statement(req);
  return (await db.runRange(s.text, s.values)).rows;
}

/** A statement the consumer runs per message: `name` lets an executor prepare it once per connection. */
export interface HotStatement extends Statement, QueryHints {}

/** Runs `s` in `tx`, passing its name and countOnly as hints. */
export function runIn<R = Record<string, unknown>>(tx: SqlExecutor, s: HotStatement): Promise<SqlResult<R>> {
  const { name, countOnly } = s;
  return tx.query<R>(s.text, s.values, name === undefined && !countOnly ? undefined : { name, countOnly });
}
