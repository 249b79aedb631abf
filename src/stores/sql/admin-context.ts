import type { RelayHeartbeat } from '../../ports/admin-store.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import type { TableNames } from './naming.js';
import type { SqlDialect, Statement } from './sql-dialect.js';

/** How the admin operations reach a store's own connections; errors arrive as StoreError. */
export interface AdminConnection {
  /** One statement in autocommit, not prepared: admin statements vary with their filters. */
  query(text: string, values?: readonly unknown[]): Promise<SqlResult>;
  /** A transaction of the store's own (READ COMMITTED on MySQL, IMMEDIATE on SQLite). */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** What each dialect's `admin-sql.ts` exports: its descriptor and the statements that differ. */
export interface DialectAdminSql {
  readonly adminDialect: SqlDialect;
  upsertHeartbeat(t: TableNames, h: RelayHeartbeat): Statement;
  /** Rows (minute, n) of outbox rows sent since `since`, by the minute they were sent in. */
  sentPerMinute(t: TableNames, since: number): Statement;
  /** Rows (minute, n) of inbox records since `since`. */
  consumedPerMinute(t: TableNames, since: number): Statement;
  /** Rows (type, group_name, error, n, oldest) of open dead letters, largest groups first. */
  deadLetterGroups(t: TableNames, limit: number): Statement;
  /** Makes the given rows pending and due at `now`, attempts 0, claim and sent time cleared. */
  resendOutbox(t: TableNames, seqs: readonly number[], now: number): Statement;
  /** Where the outbox has a queue table of its own: locks those rows first (the relay's lock order). */
  lockOutboxQueue?(t: TableNames, by: { seqs: readonly number[] } | { messageId: string }): Statement;
}

export interface AdminContext {
  readonly db: AdminConnection;
  readonly t: TableNames;
  readonly sql: DialectAdminSql;
}

/** Runs a statement built by the admin SQL. */
export const run = (exec: { query(text: string, values?: readonly unknown[]): Promise<SqlResult> }, s: Statement) =>
  exec.query(s.text, s.values);
