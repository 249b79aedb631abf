export {
  createPostgresStore,
  createPostgresOutboxStore,
  type PostgresOutbox,
  type PostgresOutboxStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from './store.js';
export { pgCommit, pgExecutor, pgTransaction, type PgQueryable, type PgPoolLike } from './executor.js';
