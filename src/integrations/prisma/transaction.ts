import type { SqlExecutor } from '../../ports/sql-executor.js';
import { runOrmTransaction, type CommitAnnouncer, type OrmTransactions } from '../shared/orm-transaction.js';
import { executorForPrisma, type PrismaTransactionLike } from './executor.js';

/** What the adapter uses of a Prisma client: its interactive transactions, and the provider it was generated for. */
export interface PrismaClientLike<Trx extends PrismaTransactionLike = PrismaTransactionLike> {
  $transaction<T>(work: (trx: Trx) => Promise<T>, options?: PrismaTransactionOptions): Promise<T>;
}

/** Prisma's interactive transaction options, passed through (its defaults: 2 s to start, 5 s to run). */
export interface PrismaTransactionOptions {
  maxWait?: number;
  timeout?: number;
  isolationLevel?: string;
}

/** The interactive transaction client a Prisma client hands its work. */
export type PrismaTransactionOf<P> = P extends PrismaClientLike<infer Trx> ? Trx : PrismaTransactionLike;

/** Surety's dialect name for a Prisma client's provider; unknown ones are checked as PostgreSQL (one cheap statement). */
function prismaDialect(prisma: object): string {
  const provider = (prisma as { _activeProvider?: unknown })._activeProvider;
  if (provider === 'mysql' || provider === 'sqlite') return provider;
  return 'postgres';
}

/** Prisma's interactive transactions on `prisma`, as the shared ORM core runs them. */
export function prismaTransactions<P extends PrismaClientLike>(
  prisma: P,
  options?: PrismaTransactionOptions,
): OrmTransactions<PrismaTransactionOf<P>> {
  return {
    dialect: prismaDialect(prisma),
    run: (work) => prisma.$transaction(work as (trx: PrismaTransactionLike) => Promise<never>, options),
    executor: (trx) => executorForPrisma(trx),
  };
}

/**
 * Runs `work` in a Prisma interactive transaction and, once it committed, tells the outbox's relays
 * in this process (and, with `notifyAfterCommit`, elsewhere) without waiting for a poll: Prisma has
 * no commit hook, so this helper is where the commit is known. A rollback announces nothing. On
 * PostgreSQL a transaction aborted by a failed statement whose error was caught is rolled back
 * with TransactionAbortedError, never reported as committed.
 * @example
 * await prismaTransaction(prisma, outbox, async (trx, tx) => {
 *   await trx.order.create({ data: { id, total } });
 *   await outbox.add(tx, { type: 'order.created', key: id, payload: { id, total } });
 * });
 */
export async function prismaTransaction<P extends PrismaClientLike, T>(
  prisma: P,
  outbox: CommitAnnouncer,
  work: (trx: PrismaTransactionOf<P>, tx: SqlExecutor) => Promise<T>,
  options?: PrismaTransactionOptions,
): Promise<T> {
  const result = await runOrmTransaction(prismaTransactions(prisma, options), work);
  outbox.committed();
  return result;
}
