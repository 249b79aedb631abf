import { describe, expect, it } from 'vitest';
import { runDoctor, type DoctorStore } from '../../src/admin/doctor/index.js';
import type { Overview, RelayHeartbeat } from '../../src/ports/admin-store.js';
import type { DeadLetterRow } from '../../src/ports/consumer-store.js';
import type { OutboxRow } from '../../src/ports/outbox-store.js';

// Unit tests of the doctor's rules over fixed figures; the staged faults with real components are in doctor.test.ts.
const NOW = 1_700_000_000_000;
const MIN = 60_000;

function overview(over: Partial<Overview> = {}): Overview {
  return {
    outbox: { pending: 0, sent: 10, dead: 0, oldestPendingAt: null },
    deadLetters: { pending: 0, replaying: 0, resolved: 0, ignored: 0, dead: 0 },
    expiredLeases: 0,
    dueRetries: [],
    inboxSize: 0,
    inboxSizeExact: true,
    throughput: [],
    deadLetterGroups: [],
    relays: [],
    stoppedRelays: [],
    ...over,
  };
}

const relay = (over: Partial<RelayHeartbeat> = {}): RelayHeartbeat => ({
  relayId: 'relay-a',
  host: 'app-1',
  pid: 7,
  startedAt: NOW - 60 * MIN,
  lastClaimedAt: NOW - 1_000,
  lastSeenAt: NOW - 1_000,
  ...over,
});

function deadLetter(over: Partial<DeadLetterRow>): DeadLetterRow {
  return {
    id: 1,
    messageId: 'm',
    group: 'billing',
    topic: 'order.created',
    type: 'order.created',
    key: 'k',
    version: 1,
    headers: {},
    body: '{}',
    bodyEncoding: 'utf8',
    status: 'pending',
    attempts: 1,
    nextRetryAt: NOW + MIN,
    lastError: 'Error: boom',
    poison: false,
    ignoredReason: null,
    claimedBy: null,
    leaseUntil: null,
    createdAt: NOW - MIN,
    updatedAt: NOW - MIN,
    ...over,
  };
}

function store(o: Overview, deadLetters: DeadLetterRow[] = [], outbox: Partial<OutboxRow>[] = []): DoctorStore {
  const admin: DoctorStore['admin'] = {
    overview: async () => o,
    listOutbox: async () => ({ items: outbox as OutboxRow[], nextBefore: null }),
    listDeadLetters: async (filter) => ({
      items: deadLetters.filter((d) => !filter.status || filter.status.includes(d.status)),
      nextBefore: null,
    }),
  };
  return { admin };
}

const due = (over: Partial<Overview['dueRetries'][number]> = {}): Overview['dueRetries'][number] => ({
  group: 'billing',
  count: 3,
  expiredLeases: 0,
  oldestDueAt: NOW - MIN,
  ...over,
});

const pendingFor = (ms: number) => ({ pending: 3, sent: 0, dead: 0, oldestPendingAt: NOW - ms });

describe('doctor rules', () => {
  it('pending messages with no relay ever: no relay is running', async () => {
    const r = await runDoctor({ store: store(overview({ outbox: pendingFor(5 * MIN) })), now: NOW });
    expect(r.verdict).toMatchObject({
      place: 'producer',
      level: 'fail',
      message: 'producer: oldest pending message is 5 min old and no relay has ever reported — no relay is running',
    });
  });

  it('a relay that is alive but not claiming waits for the broker', async () => {
    const o = overview({ outbox: pendingFor(10 * MIN), relays: [relay({ lastClaimedAt: NOW - 10 * MIN })] });
    const r = await runDoctor({ store: store(o), now: NOW });
    expect(r.verdict.message).toBe(
      'producer: oldest pending message is 10 min old and no relay has claimed for 10 min, though relay-a on app-1 is alive — the relay is waiting for the broker',
    );
  });

  it('a claiming relay that cannot publish the oldest row: warn, then fail with its error', async () => {
    const row = { messageId: 'abc', attempts: 4, lastError: 'SURETY_PUBLISH_UNROUTABLE: no route\nat ...' };
    const warn = await runDoctor({
      store: store(overview({ outbox: pendingFor(2 * MIN), relays: [relay()] }), [], [row]),
      now: NOW,
    });
    expect(warn.verdict).toMatchObject({
      level: 'warn',
      message:
        'producer: oldest pending message is 2 min old after 4 failed attempts — the relay cannot publish it: SURETY_PUBLISH_UNROUTABLE: no route',
    });
    const fail = await runDoctor({
      store: store(overview({ outbox: pendingFor(6 * MIN), relays: [relay()] }), [], [row]),
      now: NOW,
    });
    expect(fail.verdict.level).toBe('fail');
    const young = await runDoctor({
      store: store(overview({ outbox: pendingFor(10_000), relays: [relay()] })),
      now: NOW,
    });
    expect(young.verdict.level).toBe('ok');
  });

  it('picks the most upstream failure, and warnings only when nothing fails', async () => {
    const failing = Array.from({ length: 6 }, (_, i) => deadLetter({ id: i + 1, updatedAt: NOW - i * 1_000 }));
    const both = await runDoctor({
      store: store(overview({ outbox: pendingFor(20 * MIN) }), failing),
      now: NOW,
    });
    expect(both.verdict.place).toBe('producer');
    expect(both.checks.find((c) => c.id === 'consumer.failing')!.level).toBe('fail');

    const consumerOnly = await runDoctor({ store: store(overview({ relays: [relay()] }), failing), now: NOW });
    expect(consumerOnly.verdict.message).toBe('consumer: consumer group billing fails every message: Error: boom');

    const leases = { expiredLeases: 2, dueRetries: [due({ count: 2, expiredLeases: 2, oldestDueAt: NOW - 10_000 })] };
    const warnOnly = await runDoctor({ store: store(overview({ relays: [relay()], ...leases })), now: NOW });
    expect(warnOnly.verdict).toMatchObject({
      place: 'consumer',
      level: 'warn',
      message:
        'consumer: no replayer is running for billing: 2 dead letters a replayer left when it died are pending again and none has taken them over (2 retries due, the oldest for 10 s)',
    });
    const healthy = await runDoctor({ store: store(overview({ relays: [relay()] })), now: NOW });
    expect(healthy.verdict).toMatchObject({ place: null, level: 'ok' });
  });

  it('a group is failing only with enough recent failures and nothing resolved', async () => {
    const five = Array.from({ length: 5 }, (_, i) => deadLetter({ id: i + 1 }));
    const o = overview({ relays: [relay()] });
    const level = async (rows: DeadLetterRow[], over: Partial<Overview> = {}) =>
      (await runDoctor({ store: store({ ...o, ...over }, rows), now: NOW })).checks.find(
        (c) => c.id === 'consumer.failing',
      )!;
    expect((await level(five.slice(0, 4))).level).toBe('ok'); // below failingMinCount
    expect((await level([...five, deadLetter({ id: 9, status: 'resolved', updatedAt: NOW - MIN })])).level).toBe('ok');
    expect((await level(five.map((d) => ({ ...d, updatedAt: NOW - 30 * MIN })))).level).toBe('ok'); // outside window
    const some = await level(five, { throughput: [{ minute: NOW - MIN, sent: 0, consumed: 40 }] });
    expect(some.message).toBe(
      'consumer group billing failed 5 messages in the last 15 min and resolved none: Error: boom',
    );
  });

  it('rows a dead replayer left: no replayer runs for their group; warn, then fail once they wait for long', async () => {
    const check = async (g: Overview['dueRetries'][number], expiredLeases = g.expiredLeases) =>
      (await runDoctor({ store: store(overview({ relays: [relay()], expiredLeases, dueRetries: [g] })), now: NOW }))
        .checks;
    const one = (await check(due({ count: 1, expiredLeases: 1, oldestDueAt: NOW - 2 * MIN }))).find(
      (c) => c.id === 'consumer.replay-leases',
    )!;
    expect(one).toMatchObject({
      level: 'warn',
      message:
        'no replayer is running for billing: 1 dead letter a replayer left when it died is pending again and none has taken it over (1 retry due, the oldest for 2 min)',
      facts: { group: 'billing', due: 1, expiredLeases: 1, oldestDueAt: NOW - 2 * MIN, waitingMs: 2 * MIN },
    });
    expect(one.nextStep).toBe(
      'start a replayer for billing (`surety start` with replayer.enabled, or a ReplayJob beside its consumer): it takes these rows at once. To close rows that must not run: `surety dlq ignore --all-matching --group billing --status pending --reason <why>`',
    );
    const old = await check(due({ count: 4, expiredLeases: 1, oldestDueAt: NOW - 15 * MIN }));
    expect(old.find((c) => c.id === 'consumer.replay-leases')!.level).toBe('fail');
    // Explained by the dead replayer: no second finding for the same rows.
    expect(old.find((c) => c.id === 'consumer.replay-overdue')!.level).toBe('ok');
  });

  it('retries overdue with nothing replaying them: ok while young, then warn, then fail, with the next step', async () => {
    const overdue = async (waitingMs: number) =>
      (
        await runDoctor({
          store: store(overview({ relays: [relay()], dueRetries: [due({ oldestDueAt: NOW - waitingMs })] })),
          now: NOW,
        })
      ).checks.find((c) => c.id === 'consumer.replay-overdue')!;
    expect(await overdue(30_000)).toMatchObject({
      level: 'ok',
      message: '3 dead letters due for a retry, none overdue',
    });
    const warn = await overdue(5 * MIN);
    expect(warn).toMatchObject({
      level: 'warn',
      message:
        '3 dead letters of billing are overdue for a retry, the oldest by 5 min — no replayer is running for billing (or it is far behind)',
    });
    expect(warn.nextStep).toContain('start a replayer for billing (`surety start` with replayer.enabled');
    expect((await overdue(15 * MIN)).level).toBe('fail');
    const none = await runDoctor({ store: store(overview({ relays: [relay()] })), now: NOW });
    expect(none.checks.find((c) => c.id === 'consumer.replay-overdue')).toMatchObject({
      level: 'ok',
      message: 'no dead letter is due for a retry',
    });
    const verdict = await runDoctor({
      store: store(overview({ relays: [relay()], dueRetries: [due({ oldestDueAt: NOW - 20 * MIN })] })),
      thresholds: { overdueRetryWarnMs: 30 * MIN, overdueRetryFailMs: 60 * MIN },
      now: NOW,
    });
    expect(verdict.verdict.level).toBe('ok'); // thresholds are configurable
  });

  it("counts a replayer's claim as no failure: a group whose rows were only claimed is not failing", async () => {
    const claimed = Array.from({ length: 6 }, (_, i) =>
      deadLetter({ id: i + 1, status: 'replaying', claimedBy: 'replay-1', leaseUntil: NOW + MIN }),
    );
    const r = await runDoctor({ store: store(overview({ relays: [relay()] }), claimed), now: NOW });
    expect(r.checks.find((c) => c.id === 'consumer.failing')!.level).toBe('ok');
  });

  it('validates thresholds once, naming the bad one', async () => {
    await expect(runDoctor({ store: store(overview()), thresholds: { pendingAgeWarnMs: -1 } })).rejects.toThrow(
      /doctor\.thresholds\.pendingAgeWarnMs/,
    );
    await expect(runDoctor({ store: store(overview()), thresholds: { overdueRetryFailMs: -1 } })).rejects.toThrow(
      /doctor\.thresholds\.overdueRetryFailMs/,
    );
  });
});
