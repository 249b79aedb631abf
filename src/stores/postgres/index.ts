export { createPostgresOutboxStore, PostgresOutboxStore, type PostgresStoreOptions } from './store.js';
export { pgCommit, pgExecutor, pgTransaction, type PgQueryable, type PgPoolLike } from './executor.js';
