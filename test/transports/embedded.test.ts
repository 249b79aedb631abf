import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createEmbeddedTransport,
  type EmbeddedDelivery,
  type EmbeddedTransport,
  type SqliteDatabase,
} from '../../src/transports/embedded/index.js';
import { DeliveryLog, runTransportConformance, testMessage } from '../conformance/transport-suite.js';
import { uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

/** A fresh directory for one test's log files, removed by `remove()`. */
function tempLog(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'surety-embedded-'));
  return { path: join(dir, 'log.sqlite'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

runTransportConformance(
  'embedded',
  async () => {
    const file = tempLog();
    const opened: EmbeddedTransport[] = [];
    const open = (): EmbeddedTransport => {
      const transport = createEmbeddedTransport({ path: file.path });
      opened.push(transport);
      return transport;
    };
    return {
      transport: open(),
      uniqueTopic: (label) => uniqueName(label),
      prepareTopic: async () => {},
      openAnother: async () => open(),
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        file.remove();
      },
    };
  },
  { unroutableDetection: false, persistent: true, redeliveryCount: true, checkpoint: true, orderedPerTopic: true },
);

/** A fixture script in another Node process, whose printed lines a test can await. */
class FixtureProcess {
  readonly lines: string[] = [];
  readonly exited: ReturnType<typeof exited>;
  private readonly child: ChildProcess;

  constructor(script: string, env: Record<string, string>) {
    this.child = spawnTs(`transports/fixtures/${script}`, env);
    this.exited = exited(this.child);
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.lines.push(line));
  }

  async untilLine(what: string, predicate: (line: string) => boolean): Promise<string> {
    await waitFor(what, () => this.lines.some(predicate));
    return this.lines.find(predicate)!;
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

describe('embedded transport', () => {
  let file: ReturnType<typeof tempLog>;
  let transport: EmbeddedTransport;
  let children: FixtureProcess[];

  beforeEach(() => {
    file = tempLog();
    transport = createEmbeddedTransport({ path: file.path, pollIntervalMs: 25, leaseTtlMs: 1_000 });
    children = [];
  });

  afterEach(async () => {
    await Promise.all(children.map((c) => c.kill()));
    await transport.close();
    file.remove();
  });

  it('commits offsets only contiguously: ack 1 and 3 commits 1, then ack 2 commits 3', async () => {
    const topic = uniqueName('contiguous');
    await Promise.all([1, 2, 3].map((i) => transport.publish({ topic, message: testMessage(`m${i}`) })));
    const held: EmbeddedDelivery[] = [];
    await transport.subscribe({ group: 'g', topics: [topic] }, async (d) => void held.push(d));
    await waitFor('three deliveries', () => held.length === 3);
    const [d1, d2, d3] = held.sort((a, b) => a.offset - b.offset);
    expect([d1!.offset, d2!.offset, d3!.offset]).toEqual([1, 2, 3]);

    await Promise.all([d1!.ack(), d3!.ack()]);
    expect(await transport.committedOffset('g', topic)).toBe(1);
    await d2!.ack();
    expect(await transport.committedOffset('g', topic)).toBe(3);
  });

  it('delivers rows appended by another process', async () => {
    const topic = uniqueName('cross_process');
    const log = new DeliveryLog();
    await transport.subscribe({ group: 'g', topics: [topic] }, log.handler);

    const publisher = new FixtureProcess('embedded-publisher.ts', {
      SURETY_LOG_PATH: file.path,
      SURETY_TOPIC: topic,
      SURETY_COUNT: '50',
    });
    children.push(publisher);
    const ids = JSON.parse(await publisher.untilLine('the published ids', (l) => l.startsWith('['))) as string[];
    expect(await publisher.exited).toMatchObject({ code: 0 });
    await log.until('the 50 messages', (l) => l.uniqueIds().size === 50);
    expect(log.ids()).toEqual(ids);
    expect(log.deliveries[0]!.message.headers).toEqual({ from: 'child', n: '0' });
  });

  it('redelivers, with the same id, what a SIGKILLed subscriber handled but had not acked', async () => {
    const topic = uniqueName('sigkill');
    const [acked, crashed, unread] = [testMessage('acked'), testMessage('crashed'), testMessage('unread')];
    for (const message of [acked, crashed, unread]) await transport.publish({ topic, message });

    const consumer = new FixtureProcess('embedded-consumer.ts', {
      SURETY_LOG_PATH: file.path,
      SURETY_GROUP: 'g',
      SURETY_TOPIC: topic,
      SURETY_CRASH_ID: crashed.id,
    });
    children.push(consumer);
    await consumer.untilLine('the child to handle the doomed message', (l) => l === `handled ${crashed.id}`);
    await waitFor('the child to commit its ack', async () => (await transport.committedOffset('g', topic)) === 1);
    await consumer.kill();

    // The dead child's lease blocks the group until it expires (leaseTtlMs 1 s), then this one takes over.
    const log = new DeliveryLog();
    await transport.subscribe({ group: 'g', topics: [topic] }, log.handler);
    await log.until('the redelivery', (l) => l.uniqueIds().size === 2);
    expect(log.ids()).toEqual([crashed.id, unread.id]);
    expect(Buffer.from(log.deliveries[0]!.message.body).equals(crashed.body)).toBe(true);
  });

  it('keeps one consumer per group and topic; a second stands by and takes over on close', async () => {
    const topic = uniqueName('standby');
    const [active, standby] = [new DeliveryLog(), new DeliveryLog()];
    const first = await transport.subscribe({ group: 'g', topics: [topic] }, active.handler);
    await transport.subscribe({ group: 'g', topics: [topic] }, standby.handler);
    const before = testMessage('before');
    await transport.publish({ topic, message: before });
    await active.until('the first message', (l) => l.deliveries.length === 1);
    await first.close();

    const after = testMessage('after');
    await transport.publish({ topic, message: after });
    await standby.until('the message after the takeover', (l) => l.countOf(after.id) === 1);
    expect(standby.ids()).toEqual([after.id]);
  });

  it('redelivers a message whose handler threw without settling it', async () => {
    const topic = uniqueName('throws');
    const sent = testMessage('boom');
    await transport.publish({ topic, message: sent });
    const log = new DeliveryLog(async (d, l) => {
      if (l.countOf(d.message.id) === 1) throw new Error('handler failed');
      await d.ack();
    });
    await transport.subscribe({ group: 'g', topics: [topic] }, log.handler);
    await log.until('the redelivery', (l) => l.countOf(sent.id) === 2);
    expect(log.deliveries.map((d) => d.redeliveries)).toEqual([0, 1]);
  });

  it('purges only rows every group has committed past', async () => {
    const topic = uniqueName('purge');
    const sent = Array.from({ length: 4 }, (_, i) => testMessage(`m${i}`));
    for (const message of sent) await transport.publish({ topic, message });
    const fast = new DeliveryLog();
    const slow = new DeliveryLog((d, l) => (l.deliveries.length <= 2 ? d.ack() : Promise.resolve()));
    await transport.subscribe({ group: 'fast', topics: [topic] }, fast.handler);
    await transport.subscribe({ group: 'slow', topics: [topic] }, slow.handler);
    await fast.until('all four', (l) => l.deliveries.length === 4);
    await slow.until('all four', (l) => l.deliveries.length === 4);
    await waitFor(
      'both checkpoints',
      async () =>
        (await transport.committedOffset('fast', topic)) === 4 &&
        (await transport.committedOffset('slow', topic)) === 2,
    );

    expect(await transport.purgeCommitted({ batchSize: 1 })).toBe(2);
    const db = new Database(file.path, { readonly: true });
    const left = db.prepare(`SELECT message_id FROM ${transport.tables.log} ORDER BY log_offset`).pluck().all();
    db.close();
    expect(left).toEqual([sent[2]!.id, sent[3]!.id]);
  });

  it('leaves a database it was given open, and validates its options', async () => {
    const database = new Database(join(dirname(file.path), 'own.sqlite'));
    const given: SqliteDatabase = database;
    const own = createEmbeddedTransport({ database: given, tablePrefix: 'app_log_' });
    const topic = uniqueName('own_db');
    await own.publish({ topic, message: testMessage('x') });
    await own.close();
    expect(database.open).toBe(true);
    expect(database.prepare('SELECT COUNT(*) FROM app_log_messages').pluck().get()).toBe(1);
    database.close();

    expect(() => createEmbeddedTransport({ path: file.path, pollIntervalMs: 0 })).toThrow(/pollIntervalMs/);
    expect(() => createEmbeddedTransport({})).toThrow(/exactly one of "path" and "database"/);
    expect(() => createEmbeddedTransport({ path: file.path, tablePrefix: 'bad prefix' })).toThrow(/tablePrefix/);
    const t = createEmbeddedTransport({ path: file.path });
    await expect(t.subscribe({ group: 'a@b', topics: ['x'] }, async () => undefined)).rejects.toThrow(
      /"group": must not contain "@"/,
    );
    await t.close();
  });

  it('publishes and consumes 10,000 messages at a useful rate', async () => {
    const topic = uniqueName('throughput');
    const messages = Array.from({ length: 10_000 }, (_, i) => testMessage(`m${i}`));
    const publishStart = performance.now();
    await Promise.all(messages.map((message) => transport.publish({ topic, message })));
    const publishMs = performance.now() - publishStart;

    const consumeStart = performance.now();
    const log = new DeliveryLog();
    const subscription = await transport.subscribe({ group: 'g', topics: [topic] }, log.handler);
    await log.until('10,000 messages', (l) => l.deliveries.length === 10_000, 60_000);
    await subscription.close();
    const consumeMs = performance.now() - consumeStart;

    const rate = (ms: number): number => Math.round((messages.length / ms) * 1_000);
    console.log(
      `embedded: publish ${rate(publishMs)} msg/s (${publishMs.toFixed(0)} ms), consume+ack ${rate(consumeMs)} msg/s (${consumeMs.toFixed(0)} ms)`,
    );
    expect(log.ids()).toEqual(messages.map((m) => m.id));
    expect(await transport.committedOffset('g', topic)).toBe(10_000);
    expect(publishMs).toBeLessThan(20_000);
    expect(consumeMs).toBeLessThan(20_000);
  });
});
