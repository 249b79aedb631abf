export { prismaExecutor, prismaTransactionOf, type PrismaTransactionLike } from './executor.js';
export { prismaStore } from './store.js';
export {
  prismaTransaction,
  type PrismaClientLike,
  type PrismaTransactionOf,
  type PrismaTransactionOptions,
} from './transaction.js';
export type { CommitAnnouncer } from '../shared/orm-transaction.js';
