// `surety start` on the brokers a config file can name besides the embedded log: its relay publishes
// the outbox to NATS JetStream and to Redis Streams, and a subscriber of that broker receives the row.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Transport } from '../../src/ports/transport.js';
import { Outbox } from '../../src/producer/outbox.js';
import { createKafkaTransport } from '../../src/transports/kafka/index.js';
import { createNatsTransport } from '../../src/transports/nats/index.js';
import { createRedisStreamsTransport } from '../../src/transports/redis/index.js';
import { DeliveryLog } from '../conformance/transport-suite.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import { NatsAdmin } from '../transports/fixtures/nats-admin.js';

interface Broker {
  readonly kind: string;
  /** A message type of the test's own: on Kafka it is the topic, which other tests must not share. */
  readonly type?: string;
  /** The transport section of the config file, and the broker prepared for `type` to reach group `g1`. */
  prepare(type: string): Promise<{ config: string; subscriber: Transport; cleanup(): Promise<void> }>;
}

const brokers: Broker[] = [
  {
    kind: 'kafka',
    type: uniqueName('start_kafka'),
    async prepare(type) {
      // The subscriber's topology creates the topic (the test broker creates none by itself).
      const subscriber = await createKafkaTransport({
        brokers: testEnv.kafkaBrokers,
        groupId: (group) => `${type}.${group}`,
        topology: { topics: [{ name: type }] },
        logger: null,
      });
      return {
        config: `  kind: kafka\n  brokers: [${testEnv.kafkaBrokers.map((b) => b.replace(/^kafka:\/\//, '')).join(', ')}]\n`,
        subscriber,
        cleanup: () => subscriber.close(),
      };
    },
  },
  {
    kind: 'nats',
    async prepare() {
      const prefix = uniqueName('start');
      const admin = await NatsAdmin.open();
      await admin.stream(prefix, [`${prefix}.>`]);
      const subscriber = await createNatsTransport({ url: testEnv.natsUrl, subjectPrefix: prefix, logger: null });
      return {
        config: `  kind: nats\n  url: ${testEnv.natsUrl}\n  subjectPrefix: ${prefix}\n`,
        subscriber,
        cleanup: async () => {
          await subscriber.close();
          await admin.close();
        },
      };
    },
  },
  {
    kind: 'redis',
    async prepare(type) {
      const prefix = `${uniqueName('start')}:`;
      const admin = new Redis(testEnv.redisUrl);
      await admin.call('XGROUP', 'CREATE', `${prefix}${type}`, 'g1', '0', 'MKSTREAM');
      const subscriber = await createRedisStreamsTransport({ url: testEnv.redisUrl, prefix, logger: null });
      return {
        config: `  kind: redis\n  url: ${testEnv.redisUrl}\n  prefix: "${prefix}"\n`,
        subscriber,
        cleanup: async () => {
          await subscriber.close();
          const keys = await admin.keys(`${prefix}*`);
          if (keys.length > 0) await admin.del(...keys);
          admin.disconnect();
        },
      };
    },
  },
];

for (const broker of brokers) {
  describe(`surety start (SQLite -> ${broker.kind})`, () => {
    let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
    let dir: string;
    let child: ChildProcess | undefined;

    beforeEach(async () => {
      f = await makeSqliteFixture('start_broker');
      dir = mkdtempSync(join(tmpdir(), 'surety-start-'));
    });
    afterEach(async () => {
      child?.kill('SIGKILL');
      child = undefined;
      await f.teardown();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`relays the outbox to ${broker.kind} from the config file, and stops on SIGTERM`, async () => {
      const type = broker.type ?? 'order.created';
      const side = await broker.prepare(type);
      try {
        const outbox = new Outbox({ store: f.store });
        const { messageId } = await f.store.transaction((tx) => outbox.add(tx, { type, payload: { n: 1 } }));
        const config = join(dir, 'surety.yaml');
        writeFileSync(
          config,
          `database:\n  url: sqlite:${f.path}\ntransport:\n${side.config}relay:\n  pollIntervalMs: 50\n`,
        );
        child = spawnTs('cli/fixtures/surety.ts', { SURETY_LOG_LEVEL: 'warn' }, ['start', '--config', config]);
        const end = exited(child);
        let out = '';
        child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        await waitFor(
          'the start banner',
          () => new RegExp(`^ {2}relay \\S+ -> ${broker.kind}$`, 'm').test(out),
          30_000,
        );

        const log = new DeliveryLog();
        await side.subscriber.subscribe({ group: 'g1', topics: [type] }, log.handler);
        await log.until('the relayed message', (l) => l.countOf(messageId) > 0);
        await waitFor('the row marked sent', async () => (await f.store.outbox.get(messageId))?.status === 'sent');

        child.kill('SIGTERM');
        const { code, signal, stderr } = await end;
        expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
        child = undefined;
      } finally {
        await side.cleanup();
      }
    });
  });
}
