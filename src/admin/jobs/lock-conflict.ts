/**
 * Whether `err` (or an error it wraps as `cause`) is the database ending a transaction over a lock
 * conflict: a PostgreSQL deadlock (SQLSTATE 40P01), a MySQL/MariaDB deadlock (errno 1213,
 * ER_LOCK_DEADLOCK) or SQLite's busy database (SQLITE_BUSY and its extended codes). Such a batch
 * rolled back whole and says nothing about the job: running it again is the remedy. Decided by the
 * drivers' codes, never by message text.
 * @example
 * if (isLockConflict(err)) retryNow(); else countFailure(err);
 */
export function isLockConflict(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (code === '40P01' || code === 'ER_LOCK_DEADLOCK' || errno === 1213) return true;
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
