export { typeormTransactionOf } from './executor.js';
export { typeormStore } from './store.js';
export { typeormExecutor } from './transaction.js';
export type { CommitAnnouncer } from '../shared/orm-transaction.js';
