/**
 * In a child process: opens the store a fixture's `childEnv` names, on the same schema, table prefix
 * or file. SURETY_STORE is postgres (the default), mysql or sqlite.
 */
import { createMysqlStore } from '../../src/stores/mysql/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';

const env = (n: string) =>
  process.env[n] ??
  (() => {
    throw new Error(`${n} is required`);
  })();

export async function openStoreFromEnv() {
  switch (process.env.SURETY_STORE ?? 'postgres') {
    case 'postgres':
      return createPostgresStore({ connectionString: env('SURETY_PG_URL'), schema: env('SURETY_PG_SCHEMA') });
    case 'mysql':
      return createMysqlStore({ uri: env('SURETY_MYSQL_URL'), tablePrefix: env('SURETY_MYSQL_PREFIX') });
    case 'sqlite':
      return createSqliteStore({ path: env('SURETY_SQLITE_PATH'), tablePrefix: env('SURETY_SQLITE_PREFIX') });
    default:
      throw new Error(`SURETY_STORE must be postgres, mysql or sqlite (got ${process.env.SURETY_STORE})`);
  }
}
