import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createEmbeddedTransport, type EmbeddedTransport } from '../../src/transports/embedded/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

/**
 * Issue 4, acceptance 5: the lineage of one message shows each stage with its times, on every
 * database, driven by the real components: an outbox write, a relay whose first publish fails, a
 * consumer whose handler fails once, and the replay job that resolves the dead letter.
 */

type Store = StoreFixture['store'];

/** A logger that keeps warnings, to see a failure reported rather than thrown. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { ...silentLogger, warn: (_obj, msg) => void warnings.push(msg ?? ''), warnings };
}

for (const [dialect, makeFixture] of Object.entries(storeFixtures)) {
  describe(`lineage on ${dialect}`, () => {
    let f: StoreFixture;
    let store: Store;
    let dir: string;
    let logPath: string;
    let transport: EmbeddedTransport;
    const stops: (() => Promise<unknown>)[] = [];

    beforeEach(async () => {
      f = await makeFixture(`lineage_${dialect}`);
      store = f.store as Store;
      dir = mkdtempSync(join(tmpdir(), 'surety-lineage-'));
      logPath = join(dir, 'log.sqlite');
      // A short busy timeout: a publish into a log another connection holds fails quickly.
      transport = createEmbeddedTransport({ path: logPath, pollIntervalMs: 20, busyTimeoutMs: 50 });
    });
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
      await transport.close();
      rmSync(dir, { recursive: true, force: true });
      await f.teardown();
    });

    const relay = (extra: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {}) => {
      const r = new OutboxRelay({
        store,
        publisher: transport,
        logger: silentLogger,
        retention: false,
        pollIntervalMs: 20,
        backoff: { schedule: [0] }, // a failed row is due again at once
        ...extra,
      });
      stops.push(() => r.stop());
      return r;
    };

    it('shows each stage of one message with its times, in order', async () => {
      const group = uniqueName('billing');
      const outbox = new Outbox({ store });
      const t = await f.begin();
      const { messageId } = await outbox.add(t.tx, { type: 'order.created', key: 'o-1', payload: { total: 42 } });
      await t.commit();

      // Another connection holds the log's write lock: the first publish times out, for real.
      const blocker = new Database(logPath);
      blocker.exec('BEGIN IMMEDIATE');
      const r = relay({ relayId: 'relay-lineage' });
      try {
        expect(await r.runOnce()).toBe(1);
      } finally {
        blocker.exec('ROLLBACK');
        blocker.close();
      }
      expect(await store.outbox.get(messageId)).toMatchObject({ status: 'pending', attempts: 1 });
      expect(await r.runOnce()).toBe(1);
      expect(await store.outbox.get(messageId)).toMatchObject({ status: 'sent' });

      let calls = 0;
      const consumer = new Consumer({
        group,
        store,
        transport,
        logger: silentLogger,
        batchWindowMs: 5,
        deadLetters: { scheduleMs: [0] }, // due for replay at once
      }).on('order.created', async () => {
        if (++calls === 1) throw new Error('downstream unavailable');
      });
      stops.push(() => consumer.stop());
      await consumer.start();
      await waitFor(
        'the dead letter',
        async () => (await store.deadLetters.getDeadLetter(messageId, group)) !== undefined,
      );
      const replay = new ReplayJob(consumer, { owner: 'replayer-1', ratePerSecond: 1_000 });
      await waitFor('the replay', async () => {
        await replay.runOnce();
        return (await store.deadLetters.getDeadLetter(messageId, group))?.status === 'resolved';
      });

      const lineage = (await store.admin.lineage(messageId))!;
      const row = lineage.outbox!;
      expect(row).toMatchObject({ messageId, type: 'order.created', status: 'sent', attempts: 1 });
      expect(row.history).toEqual([
        {
          at: expect.any(Number),
          attempt: 1,
          outcome: 'failed',
          error: expect.stringContaining('SURETY_PUBLISH_TIMEOUT'),
          actor: 'relay-lineage',
          confirmedAt: null,
        },
      ]);
      expect(lineage.inbox).toEqual([{ group, recordedAt: expect.any(Number) }]);
      expect(lineage.deadLetters).toHaveLength(1);
      const letter = lineage.deadLetters[0]!;
      expect(letter).toMatchObject({ group, status: 'resolved', attempts: 1 });
      expect(letter.history).toEqual([
        expect.objectContaining({
          kind: 'failed',
          attempt: 1,
          detail: expect.stringContaining('downstream'),
          actor: null,
        }),
        expect.objectContaining({ kind: 'resolved', actor: 'replayer-1' }),
      ]);

      // Each stage after the one before: written, failed once, sent, failed in the consumer, handled on replay.
      const [failed, resolved] = letter.history;
      const times = [
        row.createdAt,
        row.history[0]!.at,
        row.sentAt!,
        letter.createdAt,
        failed!.at,
        lineage.inbox[0]!.recordedAt,
        resolved!.at,
      ];
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect(letter.createdAt).toBe(failed!.at);
    });

    it("keeps the relay's heartbeat while it runs, survives a failing write, and removes it on stop", async () => {
      const logger = recordingLogger();
      const r = relay({ relayId: 'relay-beat', heartbeatMs: 100, logger });
      const before = Date.now();
      await r.start();
      await waitFor('a heartbeat after a claim', async () =>
        (await store.heartbeats.relays()).some((h) => h.relayId === 'relay-beat' && h.lastClaimedAt !== null),
      );
      const [beat] = await store.heartbeats.relays();
      expect(beat).toMatchObject({ relayId: 'relay-beat', pid: process.pid });
      expect(beat!.startedAt).toBeGreaterThanOrEqual(before);
      expect(beat!.lastSeenAt).toBeGreaterThanOrEqual(beat!.lastClaimedAt!);

      // The heartbeat table goes away: writes fail, the relay only logs and keeps publishing.
      const relays = store.tables.relays;
      const name = relays.split('.').pop()!.replace(/["`]/g, '');
      const q = (n: string) => (store.dialect === 'mysql' ? `\`${n}\`` : `"${n}"`);
      await store.transaction((tx) => tx.query(`ALTER TABLE ${relays} RENAME TO ${q(`${name}_off`)}`));
      try {
        await waitFor('a failed heartbeat logged', () => logger.warnings.some((w) => w.includes('heartbeat')));
        const outbox = new Outbox({ store });
        const { messageId } = await outbox.transaction((tx) =>
          outbox.add(tx, { type: 'order.paid', key: 'o-2', payload: {} }),
        );
        await waitFor('published meanwhile', async () => (await store.outbox.get(messageId))?.status === 'sent');
      } finally {
        await store.transaction((tx) =>
          tx.query(`ALTER TABLE ${relays.replace(name, `${name}_off`)} RENAME TO ${q(name)}`),
        );
      }
      const seen = (await store.heartbeats.relays())[0]!.lastSeenAt;
      await waitFor('heartbeats again', async () => ((await store.heartbeats.relays())[0]?.lastSeenAt ?? 0) > seen);

      await r.stop();
      expect(await store.heartbeats.relays()).toEqual([]);
    });
  });
}

describe('relay heartbeat option', () => {
  it('refuses an interval out of range, naming the option and its range', async () => {
    const f = await storeFixtures.sqlite('heartbeat_option');
    try {
      // Option parsing only: the relay is never started.
      const publisher = {
        publish: async () => undefined,
        isReady: () => true,
        waitUntilReady: async () => true,
        close: async () => undefined,
      };
      for (const heartbeatMs of [10, 1.5, 700_000]) {
        expect(() => new OutboxRelay({ store: f.store, publisher, heartbeatMs })).toThrow(/relay\.heartbeatMs/);
      }
    } finally {
      await f.teardown();
    }
  });
});
