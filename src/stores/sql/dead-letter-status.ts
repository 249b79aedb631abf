import type { DeadLetterStatus } from '../../ports/consumer-store.js';
import { DEAD_LETTER_COLUMNS } from './dead-letter-row.js';
import type { Binder } from './sql-dialect.js';

/**
 * The status operators go by. A `replaying` row whose lease has ended by `now` is `pending`, due
 * since its lease ended: its replayer died (or overran the lease), and any replayer's claim takes it
 * over. Written here only, so lists, filters, counts, the overview, lineage, bulk jobs and every
 * operator action agree. `now` is the caller's epoch milliseconds, never the database's clock.
 */

/** A replaying row whose lease has ended. */
const expiredLease = (b: Binder, now: number) => `(status = 'replaying' AND lease_until <= ${b.bind(now)})`;

/** The status as of `now`, as an expression (for GROUP BY). */
export const statusAsOf = (b: Binder, now: number) =>
  `CASE WHEN ${expiredLease(b, now)} THEN 'pending' ELSE status END`;

/**
 * DEAD_LETTER_COLUMNS with `status` and `next_retry_at` as of `now`. A row under an expired lease
 * keeps `claimed_by` and `lease_until`, so a reader can tell whose claim ran out, and when.
 */
export function deadLetterColumnsAsOf(b: Binder, now: number): string {
  return DEAD_LETTER_COLUMNS.split(', ')
    .map((c) => {
      if (c === 'status') return `${statusAsOf(b, now)} AS status`;
      if (c === 'next_retry_at')
        return `CASE WHEN ${expiredLease(b, now)} THEN lease_until ELSE next_retry_at END AS next_retry_at`;
      return c;
    })
    .join(', ');
}

/**
 * Rows whose status as of `now` is one of `statuses`, written so the status indexes still serve:
 * the lease is looked at only when pending and replaying are not asked for together.
 * @example statusInAsOf(b, ['pending', 'dead'], now) // (status IN ($1, $2) OR (status = 'replaying' AND lease_until <= $3))
 */
export function statusInAsOf(b: Binder, statuses: readonly DeadLetterStatus[], now: number): string {
  if (statuses.length === 0) return '1 = 0';
  const pending = statuses.includes('pending');
  const replaying = statuses.includes('replaying');
  if (pending === replaying) return `status IN (${b.list(statuses)})`;
  if (pending) return `(status IN (${b.list(statuses)}) OR ${expiredLease(b, now)})`;
  // Bound in text order: `?` placeholders are positional.
  const others = statuses.filter((s) => s !== 'replaying');
  const live = () => `(status = 'replaying' AND (lease_until > ${b.bind(now)} OR lease_until IS NULL))`;
  if (others.length === 0) return live();
  const listed = `status IN (${b.list(others)})`;
  return `(${listed} OR ${live()})`;
}
