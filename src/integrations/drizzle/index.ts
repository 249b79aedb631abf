export { drizzleExecutor, drizzleTransactionOf } from './executor.js';
export { drizzleStore } from './store.js';
export { drizzleTransaction, type DrizzleTransactionOf } from './transaction.js';
export type { CommitAnnouncer } from '../shared/orm-transaction.js';
