import { describeError, StoreError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { AdminError } from './admin-errors.js';

/** A store left out of a merged answer, with a reason fit for the client (no driver detail). */
export interface StoreUnavailable {
  readonly store: string;
  readonly error: string;
}

/** One store's answer to a read that spans every store. */
export type StoreAnswer<T> =
  | { readonly store: string; readonly ok: true; readonly value: T }
  | { readonly store: string; readonly ok: false; readonly unavailable: StoreUnavailable };

export interface FanoutOptions {
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** What was read, for the log. */
  readonly what: string;
}

/**
 * Asks every store at once, each within `timeoutMs`, so one store that fails or hangs leaves the
 * others' answers standing. When every store fails, the first store's error is thrown (the request
 * then fails as it would with one store). Input errors are thrown as they are: they are the caller's.
 */
export async function askEvery<E extends { readonly name: string }, T>(
  entries: readonly E[],
  read: (entry: E) => Promise<T>,
  options: FanoutOptions,
): Promise<StoreAnswer<T>[]> {
  const settled = await Promise.allSettled(entries.map((e) => withTimeout(read(e), options.timeoutMs)));
  const input = settled.find(
    (s): s is PromiseRejectedResult => s.status === 'rejected' && s.reason instanceof AdminError,
  );
  if (input) throw input.reason;
  if (settled.every((s) => s.status === 'rejected')) throw (settled[0] as PromiseRejectedResult).reason;
  return settled.map((s, i) => {
    const store = entries[i]!.name;
    if (s.status === 'fulfilled') return { store, ok: true, value: s.value };
    options.logger.warn({ store, err: describeError(s.reason) }, `admin ${options.what}: store unavailable`);
    return { store, ok: false, unavailable: { store, error: clientMessage(s.reason) } };
  });
}

class StoreTimeoutError extends StoreError {}

/** `work`, or a {@link StoreError} once `ms` have passed without an answer (the work itself goes on). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(`the database did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function clientMessage(err: unknown): string {
  if (err instanceof StoreTimeoutError) return err.message;
  if (err instanceof StoreError) return 'the database did not answer';
  return 'internal error; see the server log';
}
