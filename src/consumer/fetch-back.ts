import type { Envelope } from '../core/envelope.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import type { Handler } from './handler-registry.js';

export interface FetchBackOptions<S> {
  /** Reads the authoritative state from the producer (HTTP/RPC). `null` when it no longer exists. */
  fetch(key: string, envelope: Envelope): Promise<{ version: number; state: S } | null>;
  /** The local copy's version, read in the consumer's transaction; lock the row (FOR UPDATE) where you can. */
  currentVersion(tx: SqlExecutor, key: string): Promise<number | undefined>;
  /** Writes the fetched state. Called only when it is newer than the local copy. */
  apply(tx: SqlExecutor, key: string, state: S, version: number): Promise<void>;
  /** Removes the local copy when the producer says the entity is gone. */
  remove?(tx: SqlExecutor, key: string): Promise<void>;
}

/**
 * "Notify, then fetch back": the message carries only a key; the handler fetches the producer's
 * current state and applies it under a version guard. Out-of-order and duplicate notifications
 * therefore converge on the latest state and never overwrite newer data with older.
 * @example
 * consumer.on('customer.changed', fetchBack({
 *   fetch: (id) => api.getCustomer(id),               // { version, state } | null
 *   currentVersion: async (tx, id) => (await tx.query('SELECT version FROM customers WHERE id = $1 FOR UPDATE', [id])).rows[0]?.version,
 *   apply: (tx, id, c, v) => tx.query('INSERT INTO customers ... ON CONFLICT (id) DO UPDATE ...', [id, c.name, v]),
 * }));
 */
export function fetchBack<S>(options: FetchBackOptions<S>): Handler {
  return async (_payload, { tx, envelope }) => {
    const latest = await options.fetch(envelope.key, envelope);
    if (latest === null) {
      await options.remove?.(tx, envelope.key);
      return;
    }
    const current = await options.currentVersion(tx, envelope.key);
    if (current !== undefined && current >= latest.version) return; // ours is as new or newer
    await options.apply(tx, envelope.key, latest.state, latest.version);
  };
}
