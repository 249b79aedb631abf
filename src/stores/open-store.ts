import { InvalidOptionError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import type { Store } from '../ports/store.js';

export interface OpenStoreOptions {
  /** `postgres://…`, `mysql://…` / `mariadb://…`, or `sqlite:<path>` (`sqlite::memory:` for memory). */
  url: string;
  tablePrefix?: string;
  /** PostgreSQL schema. */
  schema?: string;
  /**
   * Whether opening may create the database: a SQLite file (default true). False opens only a file
   * that is there and holds Surety's tables (else a NotMigratedError); servers are never created.
   */
  create?: boolean;
}

/**
 * Opens the store a URL names; the driver module loads only for that database.
 * @example
 * const store = await openStore({ url: process.env.DATABASE_URL! });
 * await store.migrate();
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { url, tablePrefix, schema, create = true } = options;
  const scheme = /^([a-z0-9+]+):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'postgres':
    case 'postgresql': {
      const { createPostgresStore } = await import('./postgres/index.js');
      return createPostgresStore({
        connectionString: url,
        ...(tablePrefix ? { tablePrefix } : {}),
        ...(schema ? { schema } : {}),
      });
    }
    case 'mysql':
    case 'mariadb': {
      const { createMysqlStore } = await import('./mysql/index.js');
      return createMysqlStore({
        uri: url.replace(/^mariadb:/i, 'mysql:'),
        ...(tablePrefix ? { tablePrefix } : {}),
      });
    }
    case 'sqlite': {
      const { createSqliteStore } = await import('./sqlite/index.js');
      return createSqliteStore({
        path: url.slice('sqlite:'.length),
        ...(tablePrefix ? { tablePrefix } : {}),
        fileMustExist: !create,
      });
    }
    default:
      throw new InvalidOptionError(
        'database',
        `unsupported URL "${redact(url)}": use postgres://, mysql://, mariadb:// or sqlite:<path>`,
      );
  }
}

/** @deprecated Renamed {@link openStore}; removed in the next minor version. */
export const openOutboxStore = openStore;

// Callers that open stores also show their URLs.
export { redact };
