import { TransactionEndedError } from './errors.js';

/** Anything that runs statements: a transaction's executor. */
interface Statements {
  query(...args: never[]): Promise<unknown>;
}

/**
 * Runs `work` on a view of `tx` that refuses statements issued after `work` settled. A statement
 * still being chained when `work` ended (a branch of a rejected `Promise.all`, an unawaited call)
 * would otherwise run after what follows it: the COMMIT or ROLLBACK (outside the transaction, or in
 * the next borrower's) or a ROLLBACK TO SAVEPOINT (kept, for work that failed).
 */
export async function runScoped<E extends Statements, T>(tx: E, work: (tx: E) => Promise<T>): Promise<T> {
  let ended = false;
  const scoped = {
    query: (...args: Parameters<E['query']>) =>
      ended ? Promise.reject(new TransactionEndedError()) : tx.query(...(args as never[])),
  } as unknown as E;
  try {
    return await work(scoped);
  } finally {
    ended = true;
  }
}
