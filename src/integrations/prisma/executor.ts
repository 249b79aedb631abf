import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { executorFor, sqlResult, type OrmExecutor } from '../shared/orm-executor.js';
import { transactionOf } from '../shared/transaction-binding.js';

/** What the adapter uses of a Prisma interactive transaction's client (declared, not imported: each app generates its own). */
export interface PrismaTransactionLike {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/**
 * Statements that answer with rows: through `$queryRawUnsafe`; the rest, and those read for their
 * count only (the `countOnly` hint: Prisma cannot read a void column such as a NOTIFY's, and
 * `$queryRawUnsafe` gives no count for a WITH ... INSERT), through `$executeRawUnsafe`, whose count
 * PostgreSQL also gives for a SELECT.
 */
const RETURNS_ROWS = /^\s*(?:select|with|values|show|explain)\b|\breturning\b/i;

interface RawQueryFailure {
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; originalMessage?: unknown } } };
}

/**
 * A raw query's failure with the database's own code: Prisma wraps it (P2010) with the driver
 * adapter's error in `meta`, and Surety reads PostgreSQL's SQLSTATE (23505, 25P02, 40001) from
 * `code` and MySQL's error number (1062, 1213) from `errno`.
 */
function driverError(err: unknown): unknown {
  const cause = (err as RawQueryFailure | null)?.meta?.driverAdapterError?.cause;
  if (cause?.originalCode === undefined) return err;
  const message = typeof cause.originalMessage === 'string' ? cause.originalMessage : (err as Error).message;
  const code = String(cause.originalCode);
  const errno = /^\d+$/.test(code) ? Number(code) : undefined;
  return Object.assign(new Error(message, { cause: err }), errno === undefined ? { code } : { code, errno });
}

/** The one executor of a Prisma interactive transaction. */
export function executorForPrisma(trx: PrismaTransactionLike): OrmExecutor {
  return executorFor(trx, async (sql, values, hints): Promise<SqlResult> => {
    try {
      if (!hints?.countOnly && RETURNS_ROWS.test(sql))
        return sqlResult(await trx.$queryRawUnsafe<unknown[]>(sql, ...values));
      return sqlResult([], await trx.$executeRawUnsafe(sql, ...values));
    } catch (err) {
      throw driverError(err);
    }
  });
}

/**
 * The executor of a Prisma interactive transaction, for `outbox.add` and the store's statements
 * inside it (the dialect's placeholders: `$1` on PostgreSQL).
 * @example
 * await prisma.$transaction(async (trx) => {
 *   await trx.order.create({ data: order });
 *   await outbox.add(prismaExecutor(trx), { type: 'order.created', key: order.id, payload: order });
 * });
 */
export function prismaExecutor(trx: PrismaTransactionLike): SqlExecutor {
  return executorForPrisma(trx);
}

/**
 * The Prisma transaction client a consumer's handler runs in, from its context's `tx`: its writes
 * commit together with the inbox record.
 * @example
 * consumer.on('order.created', async (order: Order, ctx) => {
 *   await prismaTransactionOf<Prisma.TransactionClient>(ctx.tx).invoice.create({ data: { orderId: order.id } });
 * });
 */
export function prismaTransactionOf<T = PrismaTransactionLike>(tx: SqlExecutor): T {
  return transactionOf<T>('Prisma', tx);
}
