import type { ConsumerStore } from '../../src/ports/store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import { waitFor } from './wait.js';

/** The database session of an open transaction: PostgreSQL's backend pid, MySQL's connection id. */
export async function sessionId(dialect: ConsumerStore['dialect'], tx: SqlExecutor): Promise<number> {
  if (dialect === 'sqlite') throw new Error('SQLite has one writer: no transaction waits for a row lock');
  const text = dialect === 'postgres' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id';
  const { rows } = await tx.query<{ id: number | string }>(text);
  return Number(rows[0]!.id);
}

/**
 * Resolves once session `id` waits for a lock another transaction holds: the event a test orders two
 * transactions on ("the second is blocked behind the first"), observed through the server's own view.
 */
export async function blockedOnLock(store: ConsumerStore, id: number): Promise<void> {
  const probe =
    store.dialect === 'postgres'
      ? 'SELECT cardinality(pg_blocking_pids($1)) AS n'
      : "SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'";
  await waitFor(
    `session ${id} to wait for a lock`,
    async () => {
      const { rows } = await store.transaction((tx) => tx.query<{ n: number | string }>(probe, [id]));
      return Number(rows[0]!.n) > 0;
    },
    30_000,
    150, // InnoDB refreshes INNODB_TRX only when it was not read in the last 100 ms
  );
}
