export { knexTransactionOf } from './executor.js';
export { knexStore } from './store.js';
export { knexExecutor } from './transaction.js';
export type { CommitAnnouncer } from '../shared/orm-transaction.js';
