export { createSqliteOutboxStore, SqliteOutboxStore, type SqliteStoreOptions } from './store.js';
export { sqliteExecutor, sqliteTransaction, type SqliteDatabaseLike, type SqliteStatementLike } from './executor.js';
