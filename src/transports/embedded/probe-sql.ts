import type { LogTables } from './sql.js';

/** Which (group, topic) pairs a probe query covers. */
export type ProbeScope = 'topic' | 'group';

/**
 * Named params: `group`, `topic` (scope `topic` only), `now`. One row per topic: the live lease
 * holder (or null), rows waiting after the checkpoint and the holder's read position (`ready`), and
 * rows read by the holder but not committed (`unacked`). Scope `group` covers every topic the group
 * has a checkpoint or a lease on. An expired lease's reads count as ready: they will be redelivered.
 * One statement, so the figures come from one snapshot. Without `hasReadOffset` (a log created by
 * an older version, not yet opened by a newer one) nothing counts as read.
 */
export function topicStates(t: LogTables, scope: ProbeScope, hasReadOffset: boolean): string {
  const topics =
    scope === 'topic'
      ? 'SELECT @topic'
      : `SELECT topic FROM ${t.checkpoints} WHERE group_name = @group UNION SELECT topic FROM ${t.leases} WHERE group_name = @group`;
  const readOffset = hasReadOffset ? 'l.read_offset' : '0';
  return `WITH topics(topic) AS (${topics}),
state AS (
  SELECT s.topic, COALESCE(c.committed_offset, 0) AS committed,
    CASE WHEN l.expires_at > @now THEN l.owner END AS owner,
    CASE WHEN l.expires_at > @now THEN MAX(${readOffset}, COALESCE(c.committed_offset, 0)) ELSE COALESCE(c.committed_offset, 0) END AS delivered
  FROM topics s
  LEFT JOIN ${t.checkpoints} c ON c.group_name = @group AND c.topic = s.topic
  LEFT JOIN ${t.leases} l ON l.group_name = @group AND l.topic = s.topic
)
SELECT topic, owner,
  (SELECT COUNT(*) FROM ${t.log} m WHERE m.topic = state.topic AND m.log_offset > state.delivered) AS ready,
  (SELECT COUNT(*) FROM ${t.log} m WHERE m.topic = state.topic AND m.log_offset > state.committed AND m.log_offset <= state.delivered) AS unacked
FROM state ORDER BY topic`;
}

/** Every (group, topic) pair the log has a checkpoint or a lease for: the queues a probe can list. */
export function knownPairs(t: LogTables): string {
  return `SELECT group_name, topic FROM ${t.checkpoints} UNION SELECT group_name, topic FROM ${t.leases} ORDER BY topic, group_name`;
}
