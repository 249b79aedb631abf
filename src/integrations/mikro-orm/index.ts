export { mikroOrmTransactionOf } from './executor.js';
export { mikroOrmStore } from './store.js';
export { mikroOrmExecutor } from './transaction.js';
export type { CommitAnnouncer } from '../shared/orm-transaction.js';
