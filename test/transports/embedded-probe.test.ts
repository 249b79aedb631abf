import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDoctorRunner } from '../../src/cli/doctor-runner.js';
import { configSchema } from '../../src/config/index.js';
import type { BrokerProbe, QueueState } from '../../src/ports/broker-probe.js';
import {
  createEmbeddedQueueProbe,
  createEmbeddedTransport,
  embeddedQueueName,
  type EmbeddedDelivery,
  type EmbeddedTransport,
} from '../../src/transports/embedded/index.js';
import { testMessage } from '../conformance/transport-suite.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

const LEASE = { pollIntervalMs: 20, leaseTtlMs: 300 };

describe('embedded queue probe', () => {
  let dir: string;
  let path: string;
  let transport: EmbeddedTransport;
  let probe: BrokerProbe;
  let topic: string;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'surety-probe-'));
    path = join(dir, 'log.sqlite');
    transport = createEmbeddedTransport({ path, ...LEASE });
    probe = createEmbeddedQueueProbe({ path });
    topic = uniqueName('probe');
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await exited(child);
    }
    await probe.close();
    await transport.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) await transport.publish({ topic, message: testMessage(`m${i}`) });
  };
  const state = (overrides: Partial<QueueState> & Pick<QueueState, 'name'>): QueueState => ({
    exists: true,
    ready: 0,
    unacked: 0,
    consumers: 0,
    durable: true,
    type: 'log',
    arguments: null,
    source: 'log',
    ...overrides,
  });
  /** Polls the probe until `queue` shows `expected` (the holder records its reads when it renews). */
  const until = async (queue: string, expected: Partial<QueueState>) => {
    let last: QueueState | undefined;
    await waitFor(
      `${queue} to show ${JSON.stringify(expected)} (last: ${JSON.stringify(last)})`,
      async () => {
        last = await probe.inspect(queue);
        return Object.entries(expected).every(([key, value]) => last![key as keyof QueueState] === value);
      },
      10_000,
    );
  };

  it('a group whose subscriber stopped: messages after its checkpoint are ready, 0 consumers', async () => {
    const queue = embeddedQueueName(topic, 'billing');
    expect(queue).toBe(`${topic}@billing`);
    await publish(2);
    const subscription = await transport.subscribe({ group: 'billing', topics: [topic] }, (d) => d.ack());
    await waitFor('both acked', async () => (await transport.committedOffset('billing', topic)) === 2);
    await subscription.close();
    await publish(5);

    expect(await probe.inspect(queue)).toEqual(state({ name: queue, ready: 5 }));
    // The group alone: summed over the topics it has consumed.
    expect(await probe.inspect('billing')).toEqual(state({ name: 'billing', ready: 5 }));
    // Another group that never consumed the topic starts at its oldest row.
    expect(await probe.inspect(`${topic}@shipping`)).toEqual(state({ name: `${topic}@shipping`, ready: 7 }));
    // A group the log has no record of.
    expect(await probe.inspect('shipping')).toEqual(state({ name: 'shipping', exists: false }));

    // With no transport open on the file at all, the read-only probe still reads it.
    await transport.close();
    const fresh = createEmbeddedQueueProbe({ path });
    try {
      expect(await fresh.inspect(queue)).toMatchObject({ ready: 5, consumers: 0 });
    } finally {
      await fresh.close();
    }
  });

  it('lists every (topic, group) pair the log has a checkpoint or a lease for', async () => {
    await publish(1);
    expect(await probe.listQueues!()).toEqual([]);
    // billing consumed and stopped: only its checkpoint remains.
    const billing = await transport.subscribe({ group: 'billing', topics: [topic] }, (d) => d.ack());
    await waitFor('billing to commit', async () => (await transport.committedOffset('billing', topic)) === 1);
    await billing.close();
    // shipping runs on two topics; on the empty one it holds a lease and has committed nothing.
    const other = uniqueName('probe_other');
    await transport.subscribe({ group: 'shipping', topics: [topic, other] }, (d) => d.ack());
    await until(`${other}@shipping`, { consumers: 1 });

    const expected = [`${topic}@billing`, `${topic}@shipping`, `${other}@shipping`];
    const listed = await probe.listQueues!();
    expect([...listed].sort()).toEqual([...expected].sort());
    for (const name of listed) expect(await probe.inspect(name)).toMatchObject({ name, exists: true });
  });

  it('a running subscriber is 1 consumer; what it holds unacked is not ready', async () => {
    const queue = `${topic}@billing`;
    const held: EmbeddedDelivery[] = [];
    const subscription = await transport.subscribe(
      { group: 'billing', topics: [topic] },
      async (d) => void held.push(d),
    );
    await until(queue, { consumers: 1, ready: 0, unacked: 0 });
    await publish(3);
    await waitFor('three deliveries', () => held.length === 3);
    await until(queue, { consumers: 1, ready: 0, unacked: 3 });

    await Promise.all(held.map((d) => d.ack()));
    await until(queue, { consumers: 1, ready: 0, unacked: 0 });

    // One subscription on two topics is still one consumer of the group.
    const other = uniqueName('probe_other');
    await subscription.close();
    await transport.subscribe({ group: 'billing', topics: [topic, other] }, (d) => d.ack());
    await until('billing', { consumers: 1 });
    // A stand-by subscriber of the group does not consume, so it is not counted.
    await transport.subscribe({ group: 'billing', topics: [topic] }, (d) => d.ack());
    expect(await probe.inspect(queue)).toMatchObject({ consumers: 1 });
  });

  it('a SIGKILLed subscriber counts until its lease expires; then what it held is ready again', async () => {
    const [acked, crashed, unread] = [testMessage('acked'), testMessage('crashed'), testMessage('unread')];
    for (const message of [acked, crashed, unread]) await transport.publish({ topic, message });
    const child = spawnTs('transports/fixtures/embedded-consumer.ts', {
      SURETY_LOG_PATH: path,
      SURETY_GROUP: 'billing',
      SURETY_TOPIC: topic,
      SURETY_CRASH_ID: crashed.id,
    });
    children.push(child);
    const lines: string[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
    await waitFor('the child to hold the doomed message', () => lines.includes(`handled ${crashed.id}`));

    // It holds `crashed` and has read `unread` ahead (prefetch 1 plus its read buffer).
    const queue = `${topic}@billing`;
    await until(queue, { consumers: 1, ready: 0, unacked: 2 });
    child.kill('SIGKILL');
    await exited(child);
    // Its lease lives on for up to 1 s (the fixture's leaseTtlMs), then nothing consumes the group.
    await until(queue, { consumers: 0, ready: 2, unacked: 0 });
  });

  it('reads a log created before read positions were recorded, and the transport adds them', async () => {
    const legacyPath = join(dir, 'legacy.sqlite');
    const legacy = new Database(legacyPath);
    legacy.exec(`
CREATE TABLE surety_log_messages (log_offset INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL,
  message_id TEXT NOT NULL, headers TEXT NOT NULL, body BLOB NOT NULL, appended_at INTEGER NOT NULL);
CREATE TABLE surety_log_checkpoints (group_name TEXT NOT NULL, topic TEXT NOT NULL, committed_offset INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, PRIMARY KEY (group_name, topic)) WITHOUT ROWID;
CREATE TABLE surety_log_leases (group_name TEXT NOT NULL, topic TEXT NOT NULL, owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL, PRIMARY KEY (group_name, topic)) WITHOUT ROWID;`);
    legacy
      .prepare(
        `INSERT INTO surety_log_messages (topic, message_id, headers, body, appended_at) VALUES (?, 'a', '{}', x'00', 0)`,
      )
      .run(topic);
    legacy.close();
    const legacyProbe = createEmbeddedQueueProbe({ path: legacyPath });
    try {
      // Without read positions nothing can be told in flight: unacked is unknown, not 0.
      expect(await legacyProbe.inspect(`${topic}@g`)).toMatchObject({ ready: 1, unacked: null });
      const upgraded = createEmbeddedTransport({ path: legacyPath, ...LEASE });
      const held: EmbeddedDelivery[] = [];
      await upgraded.subscribe({ group: 'g', topics: [topic] }, async (d) => void held.push(d));
      await waitFor('the delivery', () => held.length === 1);
      let seen: QueueState | undefined;
      await waitFor('the held message to show as unacked', async () => {
        seen = await legacyProbe.inspect(`${topic}@g`);
        return seen.unacked === 1;
      });
      expect(seen).toMatchObject({ ready: 0, consumers: 1 });
      await upgraded.close();
    } finally {
      await legacyProbe.close();
    }
  });

  it('treats a file without the log tables as an empty log', async () => {
    const emptyPath = join(dir, 'empty.sqlite');
    new Database(emptyPath).close();
    const emptyProbe = createEmbeddedQueueProbe({ path: emptyPath });
    try {
      expect(await emptyProbe.inspect(`${topic}@g`)).toEqual(state({ name: `${topic}@g` }));
      expect(await emptyProbe.inspect('g')).toMatchObject({ exists: false });
      expect(await emptyProbe.listQueues!()).toEqual([]);
    } finally {
      await emptyProbe.close();
    }
  });

  it('rejects when the log file is missing or the probe is closed, and validates its options', async () => {
    const missing = createEmbeddedQueueProbe({ path: join(dir, 'missing.sqlite') });
    await expect(missing.inspect('g')).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
    await expect(missing.listQueues!()).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
    await missing.close();
    await expect(missing.inspect('g')).rejects.toMatchObject({ code: 'SURETY_TRANSPORT_CLOSED' });
    await expect(missing.listQueues!()).rejects.toMatchObject({ code: 'SURETY_TRANSPORT_CLOSED' });

    expect(() => createEmbeddedQueueProbe({ path: '' })).toThrow(/"path"/);
    expect(() => createEmbeddedQueueProbe({ path: ':memory:' })).toThrow(/"path".*memory/);
    expect(() => createEmbeddedQueueProbe({ path, tablePrefix: 'bad prefix' })).toThrow(/"tablePrefix"/);
    expect(() => createEmbeddedQueueProbe({ path, clock: {} as never })).toThrow(/"clock"/);
  });

  it('the doctor built from an embedded config names the broker and its 0 consumers', async () => {
    await publish(4);
    const subscription = await transport.subscribe({ group: 'billing', topics: [topic] }, async () => {});
    await until(`${topic}@billing`, { consumers: 1 });
    await subscription.close();

    // `persistent: false` cannot apply to the log: every row is on disk before its publish resolves.
    const report = await doctorReport({ path, queues: [`${topic}@billing`], persistent: false });
    expect(report.verdict).toMatchObject({
      place: 'broker',
      level: 'fail',
      message: `broker: ${topic}@billing has 4 ready and 0 consumers — the consumer is down`,
    });
    expect(report.checks.map((c) => c.id)).not.toContain('broker.persistence');
    expect(report.checks.find((c) => c.id === 'broker.queue')?.facts).toMatchObject({ source: 'log', unacked: 0 });
  });

  it('the doctor without transport.queues checks every group the log knows and names the stopped one', async () => {
    await publish(2);
    const billing = await transport.subscribe({ group: 'billing', topics: [topic] }, (d) => d.ack());
    await waitFor('billing to commit', async () => (await transport.committedOffset('billing', topic)) === 2);
    await billing.close();
    await transport.subscribe({ group: 'shipping', topics: [topic] }, (d) => d.ack());
    await publish(4);
    await waitFor('shipping to commit', async () => (await transport.committedOffset('shipping', topic)) === 6);

    const report = await doctorReport({ path });
    expect(report.verdict).toMatchObject({
      place: 'broker',
      level: 'fail',
      message: `broker: ${topic}@billing has 4 ready and 0 consumers — the consumer is down`,
    });
    expect(report.checks.find((c) => c.id === 'broker.queues')).toMatchObject({
      level: 'ok',
      message: 'no queue is configured: checking the 2 queues embedded knows',
      facts: { broker: 'embedded', listed: [`${topic}@billing`, `${topic}@shipping`] },
    });
    expect(report.checks.filter((c) => c.id === 'broker.queue').map((c) => [c.facts.queue, c.level])).toEqual([
      [`${topic}@billing`, 'fail'],
      [`${topic}@shipping`, 'ok'],
    ]);
  });

  it('the doctor without transport.queues warns when the log knows no group, and fails when it cannot read it', async () => {
    await publish(1);
    expect((await doctorReport({ path })).verdict).toMatchObject({
      level: 'warn',
      message: 'broker: no queue is configured and embedded knows none — no consumer has run yet',
    });
    const missing = await doctorReport({ path: join(dir, 'missing.sqlite') });
    expect(missing.verdict).toMatchObject({ place: 'broker', level: 'fail' });
    expect(missing.verdict.message).toMatch(
      /^broker: cannot reach embedded at .*missing\.sqlite: .*cannot open the embedded log/,
    );
  });
});

/** The doctor's report for an embedded log (`transport` without its kind), run against a SQLite store of its own. */
async function doctorReport(transport: Record<string, unknown>) {
  const store = await makeSqliteFixture('probe_doctor');
  try {
    const config = configSchema.parse({
      database: { url: `sqlite:${store.path}` },
      transport: { kind: 'embedded', ...transport },
    });
    const doctor = await createDoctorRunner(config, store.store);
    try {
      return await doctor.run();
    } finally {
      await doctor.close();
    }
  } finally {
    await store.teardown();
  }
}
