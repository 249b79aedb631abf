import type { DeadLetterRow } from '../../ports/consumer-store.js';
import type { Overview } from '../../ports/admin-store.js';
import { age, count, firstLine, plural } from './format.js';
import type { DoctorThresholds } from './thresholds.js';
import type { DoctorCheck, DoctorReads } from './types.js';

const place = 'consumer' as const;
/** Rows read to judge recent failures: enough to see a failing group, cheap on a big table. */
const SAMPLE = 500;

/** Failing groups, retries nothing replays (expired leases, overdue rows), dead letters by state, inbox size. */
export async function consumerChecks(
  store: DoctorReads,
  overview: Overview,
  t: DoctorThresholds,
  now: number,
): Promise<DoctorCheck[]> {
  return [
    ...(await failingGroups(store, overview, t, now)),
    // Before the dead-letter counts: a replayer that is not running is what to fix first.
    ...leasesChecks(overview, t, now),
    ...overdueChecks(overview, t, now),
    deadLettersCheck(overview),
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
  store: DoctorReads,
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
    // A replayer's claim touches the row too, but is no failure: its own failure clears the claim.
    if (row.claimedBy !== null || row.updatedAt < since || row.updatedAt > now) continue;
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

type DueGroup = Overview['dueRetries'][number];

/** Start a replayer for the group; or close what must not run. */
const startReplayer = (group: string) =>
  `start a replayer for ${group} (\`surety start\` with replayer.enabled, or a ReplayJob beside its consumer): it takes these rows at once. To close rows that must not run: \`surety dlq ignore --all-matching --group ${group} --status pending --reason <why>\``;

/** Warn, or fail once the oldest has waited `overdueRetryFailMs`. */
const overdueLevel = (waitingMs: number, t: DoctorThresholds) => (waitingMs >= t.overdueRetryFailMs ? 'fail' : 'warn');

const dueFacts = (g: DueGroup, now: number) => ({
  group: g.group,
  due: g.count,
  expiredLeases: g.expiredLeases,
  oldestDueAt: g.oldestDueAt,
  waitingMs: now - g.oldestDueAt,
});

/**
 * Rows a replayer left `replaying` when it died. Every pass of a running replayer takes expired
 * leases of its group first, so rows still under one mean no replayer runs for that group.
 */
function leasesChecks(overview: Overview, t: DoctorThresholds, now: number): DoctorCheck[] {
  const id = 'consumer.replay-leases';
  const n = overview.expiredLeases;
  if (n === 0) return [{ id, place, level: 'ok', message: 'no replay lease has expired', facts: { expiredLeases: 0 } }];
  const groups = overview.dueRetries.filter((g) => g.expiredLeases > 0);
  if (groups.length === 0) {
    // Beyond the groups the overview lists.
    return [
      {
        id,
        place,
        level: 'warn',
        message: `${plural(n, 'dead letter')} left by a replayer that died ${n === 1 ? 'is' : 'are'} pending again and no replayer has taken them over`,
        facts: { expiredLeases: n },
        nextStep: 'start a replayer for their consumer groups (`surety start` with replayer.enabled, or a ReplayJob)',
      },
    ];
  }
  return groups.map((g) => {
    const waiting = now - g.oldestDueAt;
    const left = plural(g.expiredLeases, 'dead letter');
    return {
      id,
      place,
      level: overdueLevel(waiting, t),
      message: `no replayer is running for ${g.group}: ${left} a replayer left when it died ${g.expiredLeases === 1 ? 'is' : 'are'} pending again and none has taken ${g.expiredLeases === 1 ? 'it' : 'them'} over (${plural(g.count, 'retry', 'retries')} due, the oldest for ${age(waiting)})`,
      facts: dueFacts(g, now),
      nextStep: startReplayer(g.group),
    };
  });
}

/**
 * Pending dead letters whose retry time passed long ago: a running replayer takes due rows within
 * its interval, so none runs for the group (or it is far behind).
 */
function overdueChecks(overview: Overview, t: DoctorThresholds, now: number): DoctorCheck[] {
  const id = 'consumer.replay-overdue';
  const overdue = overview.dueRetries.filter(
    (g) => g.expiredLeases === 0 && now - g.oldestDueAt >= t.overdueRetryWarnMs,
  );
  if (overdue.length === 0) {
    const due = overview.dueRetries.reduce((n, g) => n + g.count, 0);
    return [
      {
        id,
        place,
        level: 'ok',
        message:
          due === 0
            ? 'no dead letter is due for a retry'
            : `${plural(due, 'dead letter')} due for a retry, none overdue`,
        facts: { due, warnAfterMs: t.overdueRetryWarnMs },
      },
    ];
  }
  return overdue.map((g) => {
    const waiting = now - g.oldestDueAt;
    return {
      id,
      place,
      level: overdueLevel(waiting, t),
      message: `${plural(g.count, 'dead letter')} of ${g.group} ${g.count === 1 ? 'is' : 'are'} overdue for a retry, the oldest by ${age(waiting)} — no replayer is running for ${g.group} (or it is far behind)`,
      facts: dueFacts(g, now),
      nextStep: startReplayer(g.group),
    };
  });
}
