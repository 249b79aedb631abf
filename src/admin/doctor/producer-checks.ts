import type { Overview, RelayHeartbeat, StoppedRelay } from '../../ports/admin-store.js';
import { age, count, firstLine, plural } from './format.js';
import type { DoctorThresholds } from './thresholds.js';
import type { DoctorCheck, DoctorReads } from './types.js';

const START_RELAY = 'start a relay: `surety start` with relay.enabled, or the OutboxRelay in your service';

/** Pending backlog, the relays' heartbeats and dead outbox rows. */
export async function producerChecks(
  store: DoctorReads,
  overview: Overview,
  t: DoctorThresholds,
  now: number,
): Promise<DoctorCheck[]> {
  const relays = describeRelays(overview, t, now);
  return [await pendingCheck(store, overview, relays, t, now), relaysCheck(overview, relays, now), deadCheck(overview)];
}

interface RelayView {
  /** Relays that have not stopped: running, or gone without stopping. */
  readonly all: readonly RelayHeartbeat[];
  /** Heartbeat seen within relayStaleMs. */
  readonly alive: readonly RelayHeartbeat[];
  readonly claiming: boolean;
  /** Latest claim of any relay, or null. */
  readonly lastClaimAt: number | null;
  /** The relay that stopped gracefully last, if any. */
  readonly lastStopped: StoppedRelay | undefined;
  /**
   * The last time a relay was there to claim: the latest claim, start or graceful stop of any relay.
   * Null when no relay ever reported.
   */
  readonly lastUpAt: number | null;
  readonly facts: Record<string, unknown>[];
}

function describeRelays(overview: Overview, t: DoctorThresholds, now: number): RelayView {
  const all = overview.relays;
  const stopped = overview.stoppedRelays ?? []; // absent from a store written before stopped relays were kept
  const fresh = (at: number | null) => at !== null && now - at <= t.relayStaleMs;
  const claims = all.map((r) => r.lastClaimedAt).filter((c): c is number => c !== null);
  const lastStopped = stopped.reduce<StoppedRelay | undefined>(
    (a, b) => (a && a.stoppedAt >= b.stoppedAt ? a : b),
    undefined,
  );
  const ups = [...all.map((r) => r.lastClaimedAt ?? r.startedAt), ...stopped.map((r) => r.stoppedAt)];
  return {
    all,
    alive: all.filter((r) => fresh(r.lastSeenAt)),
    claiming: all.some((r) => fresh(r.lastClaimedAt)),
    lastClaimAt: claims.length ? Math.max(...claims) : null,
    lastStopped,
    lastUpAt: ups.length ? Math.max(...ups) : null,
    facts: all.map((r) => ({
      relayId: r.relayId,
      host: r.host,
      pid: r.pid,
      lastClaimedAgoMs: r.lastClaimedAt === null ? null : now - r.lastClaimedAt,
      lastSeenAgoMs: now - r.lastSeenAt,
    })),
  };
}

/** `relay-a on app-1 stopped cleanly 14 min ago`. */
const stoppedCleanly = (r: StoppedRelay, now: number) =>
  `${r.relayId} on ${r.host}, stopped cleanly ${age(now - r.stoppedAt)} ago`;

async function pendingCheck(
  store: DoctorReads,
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
  const head = `oldest pending message is ${age(oldest)} old`;
  // Rows wait as long as no relay claims, however young they are: what counts is how long no
  // relay has been there (with none ever, how long the oldest row has waited).
  const unclaimedFor = relays.lastUpAt === null ? oldest : now - relays.lastUpAt;
  const facts = { pending, sent, dead, oldestPendingAgeMs: oldest, unclaimedForMs: unclaimedFor };
  if (!relays.claiming && unclaimedFor > t.relayStaleMs) {
    const fail = (message: string, nextStep: string): DoctorCheck => ({
      ...base,
      level: 'fail',
      message: `${head} and ${message}`,
      facts,
      nextStep,
    });
    if (relays.all.length === 0 && !relays.lastStopped) {
      return fail('no relay has ever reported — no relay is running', START_RELAY);
    }
    const since = relays.lastClaimAt === null ? 'ever' : `for ${age(now - relays.lastClaimAt)}`;
    if (relays.alive.length > 0) {
      const who = relays.alive.map((r) => `${r.relayId} on ${r.host}`).join(', ');
      return fail(
        `no relay has claimed ${since}, though ${who} is alive — the relay is waiting for the broker`,
        "check the relay's log and its connection to the broker; it claims again once the broker is reachable",
      );
    }
    const last = relays.all.length ? relays.all.reduce((a, b) => (b.lastSeenAt > a.lastSeenAt ? b : a)) : undefined;
    const stopped = relays.lastStopped;
    if (stopped && (!last || stopped.stoppedAt >= last.lastSeenAt)) {
      return fail(`no relay is running: the last one, ${stoppedCleanly(stopped, now)}`, START_RELAY);
    }
    return fail(
      `no relay has claimed ${since} — the relay is down`,
      `restart the relay (last seen: ${last!.relayId} on ${last!.host}, pid ${last!.pid}, ${age(now - last!.lastSeenAt)} ago); ${START_RELAY}`,
    );
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

function relaysCheck(overview: Overview, relays: RelayView, now: number): DoctorCheck {
  const stopped = relays.lastStopped;
  const lastStopped = stopped && {
    relayId: stopped.relayId,
    host: stopped.host,
    stoppedAgoMs: now - stopped.stoppedAt,
  };
  const base = {
    id: 'producer.relays',
    place: 'producer' as const,
    facts: { relays: relays.facts, lastStopped: lastStopped ?? null },
  };
  if (relays.all.length === 0) {
    if (relays.lastStopped) {
      return {
        ...base,
        level: 'warn',
        message: `no relay is running: the last one, ${stoppedCleanly(relays.lastStopped, now)} — new messages will not leave the outbox`,
        nextStep: START_RELAY,
      };
    }
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
