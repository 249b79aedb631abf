export {
  createSqliteStore,
  createSqliteOutboxStore,
  type SqliteOutboxStore,
  type SqliteStore,
  type SqliteStoreOptions,
} from './store.js';
export { sqliteExecutor, sqliteTransaction, type SqliteDatabaseLike, type SqliteStatementLike } from './executor.js';
