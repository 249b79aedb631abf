import { InvalidOptionError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import type { AdminStore } from '../ports/admin-store.js';
import type { ConsumerStore } from '../ports/consumer-store.js';
import type { OutboxStore } from '../ports/outbox-store.js';

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
 * Opens the store a URL names (outbox, consumer and admin concerns in one object); the driver
 * module loads only for that database.
 */
export async function openOutboxStore(options: OpenStoreOptions): Promise<OutboxStore & ConsumerStore & AdminStore> {
  const { url, tablePrefix, schema, create = true } = options;
  const scheme = /^([a-z0-9+]+):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'postgres':
    case 'postgresql': {
      const { createPostgresOutboxStore } = await import('./postgres/index.js');
      return createPostgresOutboxStore({
        connectionString: url,
        ...(tablePrefix ? { tablePrefix } : {}),
        ...(schema ? { schema } : {}),
      });
    }
    case 'mysql':
    case 'mariadb': {
      const { createMysqlOutboxStore } = await import('./mysql/index.js');
      return createMysqlOutboxStore({
        uri: url.replace(/^mariadb:/i, 'mysql:'),
        ...(tablePrefix ? { tablePrefix } : {}),
      });
    }
    case 'sqlite': {
      const { createSqliteOutboxStore } = await import('./sqlite/index.js');
      return createSqliteOutboxStore({
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

// Callers that open stores also show their URLs.
export { redact };
