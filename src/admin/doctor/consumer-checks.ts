import type { DeadLetterRow } from '../../ports/consumer-store.js';
import type { Overview } from '../../ports/admin-store.js';
import { age, count, firstLine, plural } from './format.js';
import type { DoctorThresholds } from './thresholds.js';
import type { DoctorCheck, DoctorStore } from './types.js';

const place = 'consumer' as const;
/** Rows read to judge recent failures: enough to see a failing group, cheap on a big table. */
const SAMPLE = 500;

/** Failing groups, dead letters by state, expired replay leases, inbox size. */
export async function consumerChecks(
  store: DoctorStore,
  overview: Overview,
  t: DoctorThresholds,
  now: number,
): Promise<DoctorCheck[]> {
  return [
    ...(await failingGroups(store, overview, t, now)),
    deadLettersCheck(overview),
    leasesCheck(overview),
    {
      id: 'consumer.inbox',
      place,
      level: 'ok',
      message: `the inbox holds ${overview.inboxSizeExact ? '' : 'at least '}${plural(overview.inboxSize, 'handled message')}`,
      facts: { inboxSize: overview.inboxSize, inboxSizeExact: overview.inboxSizeExact },
    },
  ];
}

interface GroupFailures {
  failures: number;
  resolved: number;
  errors: Map<string, number>;
  types: Set<string>;
}

/**
 * A group fails when, within the window, it recorded many failures (new dead letters or failed
 * replays) and resolved none: typically a handler that throws on every message.
 */
async function failingGroups(
  store: DoctorStore,
  overview: Overview,
  t: DoctorThresholds,
  now: number,
): Promise<DoctorCheck[]> {
  const since = now - t.failureWindowMs;
  const [open, resolved] = await Promise.all([
    store.listDeadLetters({ status: ['pending', 'replaying', 'dead'] }, { limit: SAMPLE }, now),
    store.listDeadLetters({ status: ['resolved'] }, { limit: SAMPLE }, now),
  ]);
  const groups = new Map<string, GroupFailures>();
  const of = (row: DeadLetterRow) => {
    let g = groups.get(row.group);
    if (!g) groups.set(row.group, (g = { failures: 0, resolved: 0, errors: new Map(), types: new Set() }));
    return g;
  };
  for (const row of open.items) {
    if (row.updatedAt < since || row.updatedAt > now) continue;
    const g = of(row);
    g.failures++;
    const error = firstLine(row.lastError);
    g.errors.set(error, (g.errors.get(error) ?? 0) + 1);
    if (row.type) g.types.add(row.type);
  }
  for (const row of resolved.items) if (row.updatedAt >= since && row.updatedAt <= now) of(row).resolved++;
  const consumed = overview.throughput.filter((b) => b.minute + 60_000 > since).reduce((n, b) => n + b.consumed, 0);

  const checks: DoctorCheck[] = [];
  for (const [group, g] of [...groups].sort((a, b) => b[1].failures - a[1].failures)) {
    if (g.failures < t.failingMinCount || g.resolved > 0) continue;
    const [topError, topCount] = [...g.errors].sort((a, b) => b[1] - a[1])[0]!;
    const window = age(t.failureWindowMs);
    const every = consumed === 0;
    checks.push({
      id: 'consumer.failing',
      place,
      level: 'fail',
      message: every
        ? `consumer group ${group} fails every message: ${topError}`
        : `consumer group ${group} failed ${plural(g.failures, 'message')} in the last ${window} and resolved none: ${topError}`,
      facts: {
        group,
        windowMs: t.failureWindowMs,
        failures: g.failures,
        resolved: g.resolved,
        consumedInWindow: consumed,
        topError,
        topErrorCount: topCount,
        types: [...g.types],
      },
      nextStep: `fix the handler of ${group} (see \`surety dlq list --group ${group}\`), then \`surety dlq replay --all-matching --group ${group}\``,
    });
  }
  if (checks.length === 0) {
    checks.push({
      id: 'consumer.failing',
      place,
      level: 'ok',
      message: `no consumer group is failing (${count(consumed)} handled in the last ${age(t.failureWindowMs)})`,
      facts: { windowMs: t.failureWindowMs, consumedInWindow: consumed },
    });
  }
  return checks;
}

function deadLettersCheck(overview: Overview): DoctorCheck {
  const d = overview.deadLetters;
  const facts = { ...d, groups: overview.deadLetterGroups };
  const summary = `dead letters: ${count(d.pending)} pending retry, ${count(d.replaying)} replaying, ${count(d.dead)} dead, ${count(d.resolved)} resolved, ${count(d.ignored)} ignored`;
  if (d.dead === 0) return { id: 'consumer.dead-letters', place, level: 'ok', message: summary, facts };
  const top = [...overview.deadLetterGroups].sort((a, b) => b.count - a.count)[0];
  return {
    id: 'consumer.dead-letters',
    place,
    level: 'warn',
    message: `${plural(d.dead, 'dead letter')} ran out of retries${top ? ` (largest open group: ${top.group} / ${top.type || '(poison)'}: ${top.error})` : ''}; ${summary}`,
    facts,
    nextStep: 'fix the cause, then `surety dlq replay --all-matching --status dead` (or ignore them with a reason)',
  };
}

function leasesCheck(overview: Overview): DoctorCheck {
  const n = overview.expiredLeases;
  const base = { id: 'consumer.replay-leases', place, facts: { expiredLeases: n } };
  if (n === 0) return { ...base, level: 'ok', message: 'no replay lease has expired' };
  return {
    ...base,
    level: 'warn',
    message: `${plural(n, 'dead letter')} ${n === 1 ? 'is' : 'are'} replaying under an expired lease — the replayer died`,
    nextStep: 'make sure a replayer runs (`surety start` with replayer.enabled); it takes these rows over',
  };
}
