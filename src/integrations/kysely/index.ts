export { kyselyExecutor, kyselyTransactionOf } from './executor.js';
export { kyselyStore } from './store.js';
export { kyselyTransaction, type CommitAnnouncer } from './transaction.js';
