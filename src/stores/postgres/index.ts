export { createPostgresOutboxStore, PostgresOutboxStore, type PostgresStoreOptions } from './store.js';
export { pgExecutor, pgTransaction, type PgQueryable, type PgPoolLike } from './executor.js';
