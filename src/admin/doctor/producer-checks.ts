import type { Overview, RelayHeartbeat } from '../../ports/admin-store.js';
import { age, count, firstLine, plural } from './format.js';
import type { DoctorThresholds } from './thresholds.js';
import type { DoctorCheck, DoctorStore } from './types.js';

const START_RELAY = 'start a relay: `surety start` with relay.enabled, or the OutboxRelay in your service';

/** Pending backlog, the relays' heartbeats and dead outbox rows. */
export async function producerChecks(
  store: DoctorStore,
  overview: Overview,
  t: DoctorThresholds,
  now: number,
): Promise<DoctorCheck[]> {
  const relays = describeRelays(overview.relays, t, now);
  return [await pendingCheck(store, overview, relays, t, now), relaysCheck(overview, relays), deadCheck(overview)];
}

interface RelayView {
  readonly all: readonly RelayHeartbeat[];
  /** Heartbeat seen within relayStaleMs. */
  readonly alive: readonly RelayHeartbeat[];
  readonly claiming: boolean;
  /** Latest claim of any relay, or null. */
  readonly lastClaimAt: number | null;
  readonly facts: Record<string, unknown>[];
}

function describeRelays(all: readonly RelayHeartbeat[], t: DoctorThresholds, now: number): RelayView {
  const fresh = (at: number | null) => at !== null && now - at <= t.relayStaleMs;
  const claims = all.map((r) => r.lastClaimedAt).filter((c): c is number => c !== null);
  return {
    all,
    alive: all.filter((r) => fresh(r.lastSeenAt)),
    claiming: all.some((r) => fresh(r.lastClaimedAt)),
    lastClaimAt: claims.length ? Math.max(...claims) : null,
    facts: all.map((r) => ({
      relayId: r.relayId,
      host: r.host,
      pid: r.pid,
      lastClaimedAgoMs: r.lastClaimedAt === null ? null : now - r.lastClaimedAt,
      lastSeenAgoMs: now - r.lastSeenAt,
    })),
  };
}

async function pendingCheck(
  store: DoctorStore,
  overview: Overview,
  relays: RelayView,
  t: DoctorThresholds,
  now: number,
): Promise<DoctorCheck> {
  const { pending, sent, dead, oldestPendingAt } = overview.outbox;
  const base = { id: 'producer.pending', place: 'producer' as const };
  if (pending === 0 || oldestPendingAt === null) {
    return {
      ...base,
      level: 'ok',
      message: `no message is waiting to leave the outbox (${count(sent)} sent, ${count(dead)} dead)`,
      facts: { pending, sent, dead, oldestPendingAgeMs: null },
    };
  }
  const oldest = now - oldestPendingAt;
  const facts = { pending, sent, dead, oldestPendingAgeMs: oldest };
  const head = `oldest pending message is ${age(oldest)} old`;
  if (!relays.claiming && oldest > t.relayStaleMs) {
    if (relays.all.length === 0) {
      return {
        ...base,
        level: 'fail',
        message: `${head} and no relay has ever reported — no relay is running`,
        facts,
        nextStep: START_RELAY,
      };
    }
    const since = relays.lastClaimAt === null ? 'ever' : `for ${age(now - relays.lastClaimAt)}`;
    if (relays.alive.length > 0) {
      const who = relays.alive.map((r) => `${r.relayId} on ${r.host}`).join(', ');
      return {
        ...base,
        level: 'fail',
        message: `${head} and no relay has claimed ${since}, though ${who} is alive — the relay is waiting for the broker`,
        facts,
        nextStep:
          "check the relay's log and its connection to the broker; it claims again once the broker is reachable",
      };
    }
    const last = relays.all.reduce((a, b) => (b.lastSeenAt > a.lastSeenAt ? b : a));
    return {
      ...base,
      level: 'fail',
      message: `${head} and no relay has claimed ${since} — the relay is down`,
      facts,
      nextStep: `restart the relay (last seen: ${last.relayId} on ${last.host}, pid ${last.pid}, ${age(now - last.lastSeenAt)} ago); ${START_RELAY}`,
    };
  }
  if (oldest < t.pendingAgeWarnMs) {
    return { ...base, level: 'ok', message: `${plural(pending, 'message')} pending, oldest ${age(oldest)} old`, facts };
  }
  const level = oldest >= t.pendingAgeFailMs ? 'fail' : 'warn';
  const page = await store.listOutbox({ status: ['pending'], to: oldestPendingAt + 1 }, { limit: 1 });
  const row = page.items[0];
  if (row && row.attempts > 0 && row.lastError) {
    return {
      ...base,
      level,
      message: `${head} after ${plural(row.attempts, 'failed attempt')} — the relay cannot publish it: ${firstLine(row.lastError)}`,
      facts: { ...facts, oldestMessageId: row.messageId, attempts: row.attempts, lastError: row.lastError },
      nextStep: `fix the cause (\`surety outbox show ${row.messageId}\`); the relay retries it with backoff`,
    };
  }
  return {
    ...base,
    level,
    message: `${head} with ${plural(pending, 'message')} pending — the relays are behind`,
    facts,
    nextStep: 'give the relay more capacity (batchSize, maxInFlight, another relay) or check the database',
  };
}

function relaysCheck(overview: Overview, relays: RelayView): DoctorCheck {
  const base = { id: 'producer.relays', place: 'producer' as const, facts: { relays: relays.facts } };
  if (relays.all.length === 0) {
    const { pending, sent, dead } = overview.outbox;
    if (pending + sent + dead === 0)
      return { ...base, level: 'ok', message: 'no relay has reported, and the outbox is empty (no producer here)' };
    return {
      ...base,
      level: 'warn',
      message: 'no relay has reported a heartbeat — new messages will not leave the outbox',
      nextStep: START_RELAY,
    };
  }
  const list = relays.facts
    .map((r) =>
      r.lastClaimedAgoMs === null
        ? `${String(r.relayId)} has not claimed yet`
        : `${String(r.relayId)} claimed ${age(Number(r.lastClaimedAgoMs))} ago`,
    )
    .join('; ');
  if (!relays.claiming) {
    const idle = overview.outbox.pending === 0 ? 'nothing is pending now, but new messages will not leave' : '';
    return {
      ...base,
      level: 'warn',
      message: `no relay is claiming: ${list}${idle ? ` — ${idle}` : ''}`,
      nextStep: START_RELAY,
    };
  }
  return { ...base, level: 'ok', message: `${plural(relays.alive.length, 'relay')} alive: ${list}` };
}

function deadCheck(overview: Overview): DoctorCheck {
  const { dead } = overview.outbox;
  const base = { id: 'producer.dead', place: 'producer' as const, facts: { dead } };
  if (dead === 0) return { ...base, level: 'ok', message: 'no outbox row is dead' };
  return {
    ...base,
    level: 'warn',
    message: `${plural(dead, 'outbox row')} ${dead === 1 ? 'is' : 'are'} dead — the relay gave up and they never reached the broker`,
    nextStep:
      'see why with `surety outbox list --status dead`, fix the cause, then `surety outbox resend --all-matching --status dead`',
  };
}
