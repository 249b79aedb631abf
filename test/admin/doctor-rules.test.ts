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
  return {
    overview: async () => o,
    listOutbox: async () => ({ items: outbox as OutboxRow[], nextBefore: null }),
    listDeadLetters: async (filter) => ({
      items: deadLetters.filter((d) => !filter.status || filter.status.includes(d.status)),
      nextBefore: null,
    }),
  };
}

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

    const warnOnly = await runDoctor({ store: store(overview({ relays: [relay()], expiredLeases: 2 })), now: NOW });
    expect(warnOnly.verdict).toMatchObject({
      place: 'consumer',
      level: 'warn',
      message: 'consumer: 2 dead letters are replaying under an expired lease — the replayer died',
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

  it('validates thresholds once, naming the bad one', async () => {
    await expect(runDoctor({ store: store(overview()), thresholds: { pendingAgeWarnMs: -1 } })).rejects.toThrow(
      /doctor\.thresholds\.pendingAgeWarnMs/,
    );
  });
});
