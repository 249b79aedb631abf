import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { Transport } from '../../src/ports/transport.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import { createRabbitMqTransport, declareTopology, parkingQueueName } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { effectsTable, wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

for (const broker of ['rabbitmq', 'embedded'] as const) {
  describe(`consumer killed with SIGKILL (${broker} + PostgreSQL)`, () => {
    let f: Awaited<ReturnType<typeof makePostgresFixture>>;
    let effects: Awaited<ReturnType<typeof effectsTable>>;
    let dir: string;
    let exchange: string;
    let group: string;
    const open = async (): Promise<Transport> => {
      if (broker === 'embedded')
        return createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 20, leaseTtlMs: 1_000 });
      const t = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange });
      await t.waitUntilReady(10_000);
      return t;
    };

    beforeEach(async () => {
      f = await makePostgresFixture(`ccrash_${broker}`);
      effects = await effectsTable(f);
      dir = mkdtempSync(join(tmpdir(), 'surety-ccrash-'));
      exchange = uniqueName('ccrash');
      group = uniqueName('g');
      if (broker === 'rabbitmq') {
        const amqp = (await import('amqplib')).default;
        const conn = await amqp.connect(testEnv.amqpUrl);
        const ch = await conn.createChannel();
        await declareTopology(ch, {
          exchanges: [{ name: exchange }],
          queues: [{ name: group }],
          bindings: [{ exchange, queue: group, pattern: '#' }],
        });
        await conn.close();
      }
    });
    afterEach(async () => {
      rmSync(dir, { recursive: true, force: true });
      if (broker === 'rabbitmq') {
        const amqp = (await import('amqplib')).default;
        const conn = await amqp.connect(testEnv.amqpUrl);
        const ch = await conn.createChannel();
        await ch.deleteQueue(group);
        await ch.deleteQueue(parkingQueueName(group));
        await ch.deleteExchange(exchange);
        await conn.close();
      }
      await f.teardown();
    });

    for (const crashAt of ['before-ack', 'mid-handler'] as const) {
      it(`has each effect exactly once when killed ${crashAt}`, async () => {
        const publisher = await open();
        const messages = [
          wire({ type: 'order.created', payload: { n: 1 } }),
          wire({ type: 'order.created', payload: { n: 2 } }),
        ];
        for (const m of messages) await publisher.publish({ topic: 'order.created', message: m });
        await publisher.close();

        const child = spawnTs('support/consumer-process.ts', {
          SURETY_BROKER: broker,
          SURETY_LOG_PATH: join(dir, 'log.sqlite'),
          SURETY_AMQP_URL: testEnv.amqpUrl,
          SURETY_EXCHANGE: exchange,
          SURETY_PG_URL: testEnv.postgresUrl,
          SURETY_PG_SCHEMA: f.schema,
          SURETY_GROUP: group,
          SURETY_EFFECTS: effects.table,
          SURETY_CRASH_AT: crashAt,
        });
        const end = await exited(child);
        expect(end.signal, end.stderr).toBe('SIGKILL');
        const afterCrash = (await effects.rows()).length;
        expect(afterCrash).toBe(crashAt === 'before-ack' ? 1 : 0); // committed but not acked / never committed

        const transport = await open();
        const consumer = new Consumer({
          group,
          store: f.store as unknown as ConsumerStore,
          transport,
          logger: silentLogger,
        }).on(
          'order.created',
          async (_p, { tx, envelope }) => void (await effects.insert(tx, envelope.id, group, 'parent')),
        );
        await consumer.start();
        const store = f.store as unknown as ConsumerStore;
        await waitFor('both messages in the inbox', async () => {
          for (const m of messages) if ((await store.inbox.inboxRecordedAt(m.id, group)) === undefined) return false;
          return true;
        });
        await consumer.stop();
        await transport.close();
        const rows = await effects.rows();
        expect(rows.map((r) => r.message_id).sort()).toEqual(messages.map((m) => m.id).sort()); // once each
      });
    }
  });
}
