import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('broker retry strategy (RabbitMQ quorum delivery limit + dead-letter exchange)', () => {
  let conn: amqp.ChannelModel;
  let ch: amqp.Channel;
  let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
  const exchange = uniqueName('bx');
  const dlx = uniqueName('dlx');
  const group = uniqueName('bq');
  const dlq = `${group}_dlq`;

  beforeEach(async () => {
    f = await makeSqliteFixture('broker_retry');
    conn = await amqp.connect(testEnv.amqpUrl);
    ch = await conn.createChannel();
    await ch.assertExchange(exchange, 'topic', { durable: true });
    await ch.assertExchange(dlx, 'fanout', { durable: true });
    await ch.assertQueue(dlq, { durable: true });
    await ch.bindQueue(dlq, dlx, '');
  });
  afterEach(async () => {
    for (const q of [group, dlq]) await ch.deleteQueue(q).catch(() => undefined);
    for (const e of [exchange, dlx]) await ch.deleteExchange(e).catch(() => undefined);
    await conn.close();
    await f.teardown();
  });

  it('lets the broker redeliver up to its limit, then its dead-letter exchange; the table stays empty', async () => {
    // The transport declares the retry topology itself, as an application would.
    const transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      topology: {
        queues: [{ name: group, type: 'quorum', deliveryLimit: 2, deadLetterExchange: dlx }],
        bindings: [{ exchange, queue: group, pattern: '#' }],
      },
    });
    await transport.waitUntilReady(10_000);
    const store = f.store as unknown as ConsumerStore;
    let calls = 0;
    const consumer = new Consumer({ group, store, transport, logger: silentLogger, brokerRetry: { enabled: true } }).on(
      'order.created',
      async () => {
        calls++;
        throw new Error('downstream down');
      },
    );
    await consumer.start();
    const m = wire({ type: 'order.created', payload: {} });
    await transport.publish({ topic: 'order.created', message: m });
    await waitFor('dead-lettered by the broker', async () => (await ch.checkQueue(dlq)).messageCount === 1);
    await consumer.stop();
    await transport.close();
    expect(calls).toBe(3); // first delivery + 2 redeliveries
    const dead = await ch.get(dlq, { noAck: true });
    expect(dead && dead.properties.messageId).toBe(m.id);
    expect(await store.deadLetters.getDeadLetter(m.id, group)).toBeUndefined();
    expect(await store.inbox.inboxRecordedAt(m.id, group)).toBeUndefined();
  });
});
