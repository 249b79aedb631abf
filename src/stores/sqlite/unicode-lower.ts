import type { SqliteDatabaseLike } from './executor.js';

/**
 * The SQL function the admin filters lower-case text with on SQLite. SQLite's own lower() folds
 * ASCII only, while the filter's pattern is lower-cased in JavaScript, so `échec` would never find
 * `ÉCHEC`; this one is JavaScript's toLowerCase, the same folding on both sides.
 */
export const UNICODE_LOWER = 'surety_lower';

const registered = new WeakSet<SqliteDatabaseLike>();

/**
 * Registers {@link UNICODE_LOWER} on `db` (once per connection). Deterministic, and callable only
 * from top-level SQL: a view or trigger in a shared database cannot reach it.
 * @example
 * registerUnicodeLower(db);
 * db.prepare(`SELECT ${UNICODE_LOWER}('ÉCHEC') AS v`).get(); // { v: 'échec' }
 */
export function registerUnicodeLower(db: SqliteDatabaseLike): void {
  if (registered.has(db)) return;
  db.function(UNICODE_LOWER, { deterministic: true, directOnly: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
  registered.add(db);
}
