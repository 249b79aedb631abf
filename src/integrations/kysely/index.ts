export { kyselyExecutor, kyselyTransactionOf } from './executor.js';
export { kyselyStore } from './store.js';
export { kyselyTransaction } from './transaction.js';
export type { CommitAnnouncer } from '../shared/orm-transaction.js';
