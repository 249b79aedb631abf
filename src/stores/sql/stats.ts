import type { OutboxStats } from '../../ports/outbox-store.js';

/** Folds `SELECT status, count(*) AS n, min(created_at) AS oldest ... GROUP BY status` rows into stats. */
export function statsFromRows(rows: Record<string, unknown>[]): OutboxStats {
  const out = { pending: 0, sent: 0, dead: 0, oldestPendingAt: null as number | null };
  for (const r of rows) {
    const status = String(r.status);
    const n = Number(r.n);
    if (status === 'pending') {
      out.pending = n;
      out.oldestPendingAt = r.oldest === null || r.oldest === undefined ? null : Number(r.oldest);
    } else if (status === 'sent') out.sent = n;
    else if (status === 'dead') out.dead = n;
  }
  return out;
}
