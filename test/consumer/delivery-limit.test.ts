import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../../src/consumer/consumer-options.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { ManualClock, waitFor } from '../support/wait.js';

const DELIVERY_LIMIT = 2;

/**
 * A quorum queue with a delivery limit gives up on a message that no consumer settles. Here the
 * consumer's process SIGKILLs itself on every delivery (a crash loop); past the limit the message
 * must reach the dead-letter table, not vanish.
 */
for (const engine of ['dead-letter-table', 'broker'] as const) {
  describe(`a delivery limit reached by a consumer crash loop (RabbitMQ + PostgreSQL, ${engine} retries)`, () => {
    let f: Awaited<ReturnType<typeof makePostgresFixture>>;
    let conn: amqp.ChannelModel;
    let exchange: string;
    let group: string;
    let parking: string;
    const transports: RabbitMqTransport[] = [];

    const open = async (): Promise<RabbitMqTransport> => {
      const t = await createRabbitMqTransport({
        url: testEnv.amqpUrl,
        exchange,
        topology: {
          queues: [{ name: group, deliveryLimit: DELIVERY_LIMIT }],
          bindings: [{ exchange, queue: group, pattern: '#' }],
        },
      });
      transports.push(t);
      expect(await t.waitUntilReady(10_000)).toBe(true);
      return t;
    };
    /** Ready messages in `queue`, by a passive declare of its own; 0 when it does not exist. */
    const ready = async (queue: string): Promise<number> => {
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      try {
        return (await ch.checkQueue(queue)).messageCount;
      } catch {
        return 0;
      } finally {
        await ch.close().catch(() => undefined);
      }
    };

    beforeEach(async () => {
      f = await makePostgresFixture(`dlimit_${engine}`);
      conn = await amqp.connect(testEnv.amqpUrl);
      conn.on('error', () => undefined);
      exchange = uniqueName('dlimit');
      group = uniqueName('dlimit_g');
      parking = `${group}.dead-letters`;
    });
    afterEach(async () => {
      for (const t of transports.splice(0)) await t.close();
      const ch = await conn.createChannel();
      for (const q of [group, parking]) await ch.deleteQueue(q);
      await ch.deleteExchange(exchange);
      await conn.close();
      await f.teardown();
    });

    it('parks the message past the limit, and a normal consumer records it without running the handler', async () => {
      const sent = wire({ type: 'order.created', key: 'k-1', payload: { note: 'Grüße, 注文 ✓', total: 42 } });
      const publisher = await open();
      await publisher.publish({ topic: 'order.created', message: sent });

      // Each child consumes, and dies the moment its handler is called; the broker counts each return.
      let deaths = 0;
      for (;;) {
        const child = spawnTs('support/consumer-process.ts', {
          SURETY_BROKER: 'rabbitmq',
          SURETY_AMQP_URL: testEnv.amqpUrl,
          SURETY_EXCHANGE: exchange,
          SURETY_PG_URL: testEnv.postgresUrl,
          SURETY_PG_SCHEMA: f.schema,
          SURETY_GROUP: group,
          SURETY_CRASH_AT: 'every-delivery',
          SURETY_DELIVERY_LIMIT: String(DELIVERY_LIMIT),
          ...(engine === 'broker' ? { SURETY_RETRY: 'broker' } : {}),
        });
        const end = await exited(child);
        expect(end.signal, end.stderr).toBe('SIGKILL');
        deaths++;
        await waitFor(
          'the message back in its queue or parked (not dropped)',
          async () => (await ready(group)) + (await ready(parking)) === 1,
        );
        if ((await ready(parking)) === 1) break;
        expect(deaths).toBeLessThanOrEqual(DELIVERY_LIMIT);
      }
      expect(deaths).toBe(DELIVERY_LIMIT + 1); // the first delivery and its redeliveries up to the limit

      const store = f.store as unknown as ConsumerStore;
      const clock = new ManualClock(Date.now());
      const transport = await open();
      const handled: boolean[] = [];
      const dead: string[] = [];
      const consumer = new Consumer({
        group,
        store,
        transport,
        clock,
        logger: silentLogger,
        onDead: (d) => dead.push(d.messageId),
        ...(engine === 'broker' ? { brokerRetry: { enabled: true } as const } : {}),
      }).on('order.created', async (_payload, { replay }) => void handled.push(replay));
      await consumer.start();
      await waitFor(
        'the dead-letter row',
        async () => (await store.deadLetters.getDeadLetter(sent.id, group)) !== undefined,
      );
      await consumer.stop(); // after the ack: an unacked message would return to its queue now

      const row = (await store.deadLetters.getDeadLetter(sent.id, group))!;
      expect(row).toMatchObject({
        messageId: sent.id,
        group,
        topic: 'order.created',
        type: 'order.created',
        key: 'k-1',
        attempts: 1,
        poison: false,
        status: engine === 'broker' ? 'dead' : 'pending',
        nextRetryAt: engine === 'broker' ? null : clock.now() + DEFAULT_RETRY_SCHEDULE_MS[0]!,
      });
      expect(row.lastError).toBe(
        `the broker gave up on this message after ${DELIVERY_LIMIT + 1} deliveries (delivery_limit) before a consumer settled it; recorded without running the handler`,
      );
      expect(Buffer.from(row.body, row.bodyEncoding).equals(sent.body)).toBe(true); // byte for byte
      expect(row.headers).toMatchObject(sent.headers);
      expect(handled).toEqual([]);
      expect(await store.inbox.inboxRecordedAt(sent.id, group)).toBeUndefined();
      expect(dead).toEqual(engine === 'broker' ? [sent.id] : []);
      expect([await ready(group), await ready(parking)]).toEqual([0, 0]); // acked, not redelivered

      if (engine === 'dead-letter-table') {
        // Not the handler's verdict: the replay job retries it on the schedule, through the handler.
        clock.advance(DEFAULT_RETRY_SCHEDULE_MS[0]!);
        expect(await new ReplayJob(consumer).runOnce()).toBe(1);
        expect(handled).toEqual([true]);
        expect(await store.deadLetters.getDeadLetter(sent.id, group)).toMatchObject({ status: 'resolved' });
      }
    });

    it('only acks a parked copy of a message the group has already handled', async () => {
      const store = f.store as unknown as ConsumerStore;
      const transport = await open();
      let handled = 0;
      const consumer = new Consumer({
        group,
        store,
        transport,
        logger: silentLogger,
        ...(engine === 'broker' ? { brokerRetry: { enabled: true } as const } : {}),
      }).on('order.created', async () => void handled++);
      await consumer.start();
      const sent = wire({ type: 'order.created', payload: { n: 1 } });
      await transport.publish({ topic: 'order.created', message: sent });
      await waitFor(
        'the message handled',
        async () => (await store.inbox.inboxRecordedAt(sent.id, group)) !== undefined,
      );

      // A second copy (a relay's republish, say) that the broker gave up on.
      const ch = await conn.createConfirmChannel();
      expect((await ch.checkQueue(parking)).consumerCount).toBe(1); // the subscription drains it
      ch.sendToQueue(parking, sent.body, { messageId: sent.id, headers: sent.headers, persistent: true });
      await ch.waitForConfirms();
      await ch.close();
      await waitFor('the parked copy taken', async () => (await ready(parking)) === 0);
      await consumer.stop();

      expect(await ready(parking)).toBe(0); // acked
      expect(handled).toBe(1);
      expect(await store.deadLetters.getDeadLetter(sent.id, group)).toBeUndefined();
    });
  });
}
