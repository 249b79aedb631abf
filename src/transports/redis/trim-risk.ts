import { compareEntryIds } from './stream-replies.js';

export interface StreamFigures {
  readonly length: number;
  readonly firstEntryId: string | null;
  /** Entries ever added (Redis 7). */
  readonly entriesAdded: number | null;
}

export interface GroupFigures {
  readonly pending: number;
  /** Entries the group has not read yet; null when Redis cannot tell (Redis 6, or after some deletions). */
  readonly lag: number | null;
  readonly lastDeliveredId: string;
  readonly oldestPendingId: string | null;
}

/** The publishers' trim bounds, as far as the probe was told. */
export interface TrimBounds {
  readonly maxLen?: number;
  readonly maxAgeMs?: number;
}

/** How close to a bound counts as at it: approximate trimming (`~`) cuts in whole macro nodes. */
const NEAR = 0.9;

/**
 * Why trimming may drop, or has dropped, entries `group` has not acked or not read: trimming never
 * looks at consumer groups. Empty when nothing is at risk.
 */
export function trimWarnings(
  stream: string,
  group: string,
  s: StreamFigures,
  g: GroupFigures,
  bounds: TrimBounds,
  nowMs: number,
): string[] {
  const warnings: string[] = [];
  const where = `${stream}@${group}`;
  const oldestPendingGone =
    g.oldestPendingId !== null && (s.firstEntryId === null || compareEntryIds(g.oldestPendingId, s.firstEntryId) < 0);
  if (oldestPendingGone) {
    warnings.push(
      `${where}: pending entries from ${g.oldestPendingId} were trimmed before they were acked — they are lost; raise maxLen/maxAgeMs`,
    );
  }
  if (g.lag !== null && g.lag > s.length) {
    warnings.push(
      `${where}: ${g.lag - s.length} entries were trimmed before the group read them — they are lost; raise maxLen/maxAgeMs`,
    );
  }
  const behind = g.pending > 0 || (g.lag ?? 0) > 0;
  if (behind && bounds.maxLen !== undefined && s.length >= NEAR * bounds.maxLen) {
    warnings.push(
      `${where}: the stream holds ${s.length} entries, at its maxLen of ${bounds.maxLen}, while the group has ` +
        `${g.pending} pending and ${g.lag ?? 'unknown'} unread — the next publishes trim entries it has not acked`,
    );
  }
  // The oldest unread entry follows the last one delivered, or is the first one left.
  const unread =
    g.lag && s.firstEntryId !== null
      ? compareEntryIds(g.lastDeliveredId, s.firstEntryId) < 0
        ? s.firstEntryId
        : g.lastDeliveredId
      : null;
  const oldest = [g.oldestPendingId, unread]
    .filter((id): id is string => id !== null)
    .map((id) => Number(id.split('-')[0]))
    .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  if (bounds.maxAgeMs !== undefined && Number.isFinite(oldest) && nowMs - oldest >= NEAR * bounds.maxAgeMs) {
    warnings.push(
      `${where}: the group's oldest unacked or unread entry is ${Math.round((nowMs - oldest) / 1000)} s old, ` +
        `near the maxAgeMs of ${bounds.maxAgeMs} ms — trimming will drop it`,
    );
  }
  return warnings;
}
