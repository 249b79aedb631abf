import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import type { OwnConnection } from '../sql/own-connection.js';
import { storeError } from './errors.js';
import {
  HeldClient,
  pgCommit,
  pgTransaction,
  statementName,
  type PgPoolLike,
  type PgPreparing,
  type PgQueryable,
} from './executor.js';
import { CLAIM_PLAN_SETTINGS } from './outbox-sql.js';

/** The store's own connection on PostgreSQL, and `query` for statements not worth preparing. */
export interface PostgresConnection extends OwnConnection {
  /** One statement, not prepared: admin statements vary with their filters. */
  query(text: string, values?: readonly unknown[]): Promise<SqlResult>;
}

/**
 * The store's own connection on a pg pool, driver errors as StoreError. `run` prepares each of the
 * store's statements once per connection; `runRange` runs one in a transaction of its own with the
 * planner's scan fallbacks off (see CLAIM_PLAN_SETTINGS).
 */
export function postgresConnection(pool: PgPoolLike): PostgresConnection {
  const rowsOf = (res: { rows: unknown[]; rowCount: number | null }): SqlResult => ({
    rows: res.rows as Record<string, unknown>[],
    rowCount: res.rowCount ?? 0,
  });
  const translated =
    <A extends unknown[], T>(fn: (...args: A) => Promise<T>) =>
    async (...args: A): Promise<T> => {
      try {
        return await fn(...args);
      } catch (err) {
        throw storeError(err);
      }
    };
  const run = translated(async (text: string, values?: readonly unknown[]) =>
    rowsOf(
      await (pool as unknown as PgPreparing).query({ name: statementName(text), text, values: values && [...values] }),
    ),
  );
  const query = translated(async (text: string, values?: readonly unknown[]) =>
    rowsOf(await pool.query(text, values as unknown[] | undefined)),
  );
  const transaction = async <T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> => {
    try {
      return await pgTransaction(pool, work);
    } catch (err) {
      throw storeError(err);
    }
  };
  const runRange = translated((text: string, values: readonly unknown[]) =>
    withClient(pool, async (client) => {
      await client.query(`BEGIN; ${CLAIM_PLAN_SETTINGS}`);
      try {
        const res = await client.query(text, [...values]);
        await pgCommit(client);
        return rowsOf(res);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }),
  );
  return { run, query, runRange, transaction };
}

async function withClient<T>(pool: PgPoolLike, fn: (client: PgQueryable) => Promise<T>): Promise<T> {
  const held = await HeldClient.from(pool);
  try {
    const result = await fn(held.client);
    held.release();
    return result;
  } catch (err) {
    held.release(err);
    throw err;
  }
}
