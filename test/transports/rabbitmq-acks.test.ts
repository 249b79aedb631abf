import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/ports/transport.js';
import {
  createRabbitMqTransport,
  parkingQueueName,
  type RabbitMqTransport,
} from '../../src/transports/rabbitmq/index.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

/** Messages ready in a queue, straight from the broker (a passive declare, not the periodic statistics). */
async function ready(queue: string): Promise<number> {
  const c = await connect(testEnv.amqpUrl);
  try {
    const ch = await c.createChannel();
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await c.close();
  }
}

describe('rabbitmq transport: coalesced acks', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  const open = async (exchange: string): Promise<RabbitMqTransport> => {
    const t = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange, closeTimeoutMs: 200 });
    cleanups.push(() => t.close());
    await t.waitUntilReady(10_000);
    return t;
  };

  it('acks what its handlers settled, in one frame when they form a run, and never a delivery still in hand', async () => {
    const exchange = uniqueName('acks');
    const group = uniqueName('acks_q');
    cleanups.push(async () => {
      const c = await connect(testEnv.amqpUrl);
      const ch = await c.createChannel();
      await ch.deleteQueue(group);
      await ch.deleteQueue(parkingQueueName(group));
      await ch.deleteExchange(exchange);
      await c.close();
    });
    const t = await open(exchange);
    const got: Delivery[] = [];
    const subscription = await t.subscribe({ group, topics: ['order.created'], prefetch: 50 }, async (d) => {
      got.push(d); // settled later, as a consumer settles a batch once it committed
    });
    const ids = Array.from({ length: 6 }, () => randomUUID());
    for (const id of ids)
      await t.publish({
        topic: 'order.created',
        message: { id, headers: { 'surety-type': 'order.created' }, body: Buffer.from('{}') },
      });
    await waitFor('all six delivered', async () => got.length === 6);
    expect(got.map((d) => d.message.id)).toEqual(ids);

    // The last five settle in one turn (one ack frame); the first is still being handled.
    for (const d of got.slice(1)) await d.ack();
    // Closing sends the acks collected, then hands back what is unsettled: the first one, and only it.
    await subscription.close();
    await waitFor('the unsettled one to be requeued', async () => (await ready(group)) === 1);
    const again: Delivery[] = [];
    const second = await t.subscribe({ group, topics: ['order.created'] }, async (d) => {
      again.push(d);
      await d.ack();
    });
    await waitFor('the redelivery', async () => again.length === 1);
    expect(again[0]!.message.id).toBe(ids[0]);
    expect(again[0]!.redeliveries).toBeGreaterThanOrEqual(1);
    await second.close();
    expect(await ready(group)).toBe(0); // its ack went out before its channel closed
    expect(again).toHaveLength(1);
  });
});
