export {
  createMysqlStore,
  createMysqlOutboxStore,
  type MysqlOutboxStore,
  type MysqlStore,
  type MysqlStoreOptions,
} from './store.js';
export {
  mysqlExecutor,
  mysqlTransaction,
  type MysqlIsolationLevel,
  type MysqlQueryable,
  type MysqlPoolLike,
  type MysqlCallbackPoolLike,
  type MysqlPoolConnectionLike,
} from './executor.js';
