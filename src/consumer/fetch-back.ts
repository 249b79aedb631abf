import { z } from 'zod';
import type { Envelope } from '../core/envelope.js';
import { SuretyError } from '../core/errors.js';
import { parseOptions } from '../core/options.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import type { Handler } from './handler-registry.js';
import { inTurnPerKey } from './turns-per-key.js';

/**
 * What `fetch` answers: the producer's current state with its version; its deletion with the
 * version the entity had when it went; or `null` when it is gone and the deletion has no version.
 */
export type FetchedState<S> =
  { readonly version: number; readonly state: S } | { readonly version: number; readonly deleted: true } | null;

export interface FetchBackOptions<S> {
  /** Reads the authoritative state from the producer (HTTP/RPC). */
  fetch(key: string, envelope: Envelope): Promise<FetchedState<S>>;
  /** Writes the fetched state. Called only when its version is higher than any the guard holds for the key. */
  apply(tx: SqlExecutor, key: string, state: S, version: number): Promise<unknown>;
  /** Removes the local copy when the producer says the entity is gone. */
  remove?(tx: SqlExecutor, key: string): Promise<unknown>;
  /**
   * Optional: the local copy's version, for rows written before the guard existed or by other code.
   * Read once the guard is held; the state is applied only when newer than this too.
   */
  currentVersion?(tx: SqlExecutor, key: string): Promise<number | undefined>;
  /**
   * The guard's name (1-200 characters; default: the message type). Give every handler that writes
   * the same local copy the same scope.
   */
  scope?: string;
}

const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', `must be a function (${what})`);
const schema = z.object({
  fetch: fn('key, envelope => { version, state } | { version, deleted: true } | null'),
  apply: fn('tx, key, state, version => void'),
  remove: fn('tx, key => void').optional(),
  currentVersion: fn('tx, key => number | undefined').optional(),
  scope: z.string().min(1).max(200).optional(),
});

/**
 * "Notify, then fetch back": the message carries only a key; the handler fetches the producer's
 * current state and applies it only when its version is newer than every version applied for the
 * key before. The check is a version guard of the consumer group in the consumer's database
 * (`versions` in the handler context), raised in the handler's transaction: two processes handling
 * the first notifications of a key, with no local row yet, cannot both pass it, and a rolled-back
 * apply leaves no trace. Out-of-order and duplicate notifications converge on the newest state.
 *
 * A deletion with a version raises the guard to it, so no older state returns. A `null` (no
 * version) removes the local copy and leaves the guard where it was: a state older than or as old as
 * the newest applied never returns, but a stale answer newer than that can.
 * @example
 * consumer.on('customer.changed', fetchBack({
 *   fetch: (id) => api.getCustomer(id), // { version, state } | { version, deleted: true } | null
 *   apply: (tx, id, c, version) =>
 *     tx.query(
 *       `INSERT INTO customers (id, name, version) VALUES ($1, $2, $3)
 *        ON CONFLICT (id) DO UPDATE SET name = $2, version = $3`,
 *       [id, c.name, version],
 *     ),
 *   remove: (tx, id) => tx.query('DELETE FROM customers WHERE id = $1', [id]),
 * }));
 */
export function fetchBack<S>(options: FetchBackOptions<S>): Handler {
  const o = parseOptions(schema, options, 'fetchBack') as Readonly<FetchBackOptions<S>>;
  return async (_payload, { tx, envelope, versions }) => {
    const { key } = envelope;
    const scope = o.scope ?? envelope.type;
    const latest = await o.fetch(key, envelope);
    if (latest !== null && typeof latest !== 'object') {
      throw new SuretyError(
        'SURETY_INVALID_INPUT',
        `fetchBack: fetch must return { version, state }, { version, deleted: true } or null, got ${typeof latest}`,
      );
    }
    // Handlers running at once in one transaction share its locks: the guard alone would not order them.
    await inTurnPerKey(tx, `${scope}\0${key}`, async () => {
      if (latest === null) {
        await versions.hold(scope, key); // waits for a concurrent first apply, so it is removed too
        await o.remove?.(tx, key);
        return;
      }
      if (!(await versions.raise(scope, key, latest.version))) return; // as new or newer was applied
      const current = await o.currentVersion?.(tx, key);
      if (current !== undefined && current >= latest.version) return; // the local copy is as new or newer
      if ('deleted' in latest) await o.remove?.(tx, key);
      else await o.apply(tx, key, latest.state, latest.version);
    });
  };
}
