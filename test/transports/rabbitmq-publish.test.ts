import { randomUUID } from 'node:crypto';
import type { Channel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { WireMessage } from '../../src/core/wire.js';
import type { Delivery } from '../../src/ports/transport.js';
import {
  createRabbitMqTransport,
  type RabbitMqTransport,
  type RabbitMqTransportOptions,
} from '../../src/transports/rabbitmq/index.js';
import { testEnv, uniqueName } from '../support/env.js';
import { adminAmqp } from '../support/rabbit-admin.js';
import { waitFor } from '../support/wait.js';

function wireMessage(id: string = randomUUID()): WireMessage {
  return {
    id,
    headers: {
      'surety-type': 'order.created',
      'surety-key': 'order-17',
      'surety-version': '1',
      'surety-created-at': '2024-05-01T12:00:00.000Z',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'x-tenant': 'acmé',
    },
    body: Buffer.from(JSON.stringify({ orderId: 'order-17', total: 42 })),
  };
}

/** 'ok' or the PublishError code of each publish, in order. */
async function outcomes(publishes: readonly Promise<void>[]): Promise<string[]> {
  return Promise.all(
    publishes.map((p) =>
      p.then(
        () => 'ok',
        (err: unknown) => (err instanceof PublishError ? err.code : `unexpected: ${String(err)}`),
      ),
    ),
  );
}

describe('rabbitmq transport: publishing', () => {
  let ch: Channel;
  let transports: RabbitMqTransport[] = [];
  let queues: string[] = [];
  let exchanges: string[] = [];

  const amqp = adminAmqp();
  beforeEach(async () => {
    ch = amqp.channel;
  });
  afterEach(async () => {
    await Promise.all(transports.map((t) => t.close()));
    for (const q of queues) await ch.deleteQueue(q);
    for (const e of exchanges) await ch.deleteExchange(e);
    await ch.close();
    transports = [];
    queues = [];
    exchanges = [];
  });

  /** A ready transport on an exchange of this test's own; queues named in `topology` are deleted afterwards. */
  async function open(
    label: string,
    options: Partial<RabbitMqTransportOptions> = {},
  ): Promise<{ t: RabbitMqTransport; exchange: string }> {
    const exchange = options.exchange ?? uniqueName(label);
    exchanges.push(exchange);
    queues.push(...(options.topology?.queues ?? []).map((q) => q.name));
    exchanges.push(...(options.topology?.exchanges ?? []).map((e) => e.name));
    const t = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      connectionName: uniqueName(label),
      ...options,
      exchange,
    });
    transports.push(t);
    expect(await t.waitUntilReady(10_000)).toBe(true);
    return { t, exchange };
  }

  it('round-trips a message: native AMQP properties on the broker, the same wire message to a subscriber', async () => {
    const group = uniqueName('roundtrip_group');
    const tap = uniqueName('roundtrip_tap');
    const exchange = uniqueName('roundtrip');
    const { t } = await open('roundtrip', {
      exchange,
      topology: { queues: [{ name: tap, type: 'classic' }], bindings: [{ exchange, queue: tap, pattern: 'order.*' }] },
    });
    queues.push(group);
    const received: Delivery[] = [];
    const subscription = await t.subscribe({ group, topics: ['order.created'] }, async (d) => {
      received.push(d);
      await d.ack();
    });
    const sent = wireMessage();
    await t.publish({ topic: 'order.created', message: sent });

    await waitFor('the delivery', () => received.length === 1, 10_000);
    const [got] = received;
    expect(got!.message).toEqual(sent);
    expect(got!.topic).toBe('order.created');
    expect(got!.redeliveries).toBe(0);

    const probe = await amqp.connection.createChannel();
    const raw = await probe.get(tap, { noAck: true });
    await probe.close();
    if (raw === false) throw new Error('the tap queue got nothing');
    expect(raw.fields.routingKey).toBe('order.created');
    expect(raw.properties).toMatchObject({
      messageId: sent.id,
      type: 'order.created',
      contentType: 'application/json',
      deliveryMode: 2,
      timestamp: Date.parse('2024-05-01T12:00:00Z') / 1000,
      headers: sent.headers,
    });
    await subscription.close();
    await waitFor('the ack to reach the broker', async () => (await t.inspectQueue(group))?.messageCount === 0, 10_000);
  });

  it('rejects exactly the unroutable publishes with SURETY_PUBLISH_UNROUTABLE, never resolving them', async () => {
    const bound = uniqueName('unroutable_bound');
    const exchange = uniqueName('unroutable');
    const { t } = await open('unroutable', {
      exchange,
      topology: {
        queues: [{ name: bound, type: 'classic' }],
        bindings: [{ exchange, queue: bound, pattern: 'bound' }],
      },
    });
    // Interleave routable and unroutable publishes, and reuse ids across them, so that a return
    // matched to the wrong publish would show.
    const ids = Array.from({ length: 100 }, () => randomUUID());
    const publishes: Promise<void>[] = [];
    const expected: string[] = [];
    ids.forEach((id, i) => {
      const unroutableFirst = i % 2 === 0;
      publishes.push(t.publish({ topic: unroutableFirst ? 'nobody.home' : 'bound', message: wireMessage(id) }));
      publishes.push(t.publish({ topic: unroutableFirst ? 'bound' : 'nobody.home', message: wireMessage(id) }));
      expected.push(...(unroutableFirst ? ['SURETY_PUBLISH_UNROUTABLE', 'ok'] : ['ok', 'SURETY_PUBLISH_UNROUTABLE']));
    });
    expect(await outcomes(publishes)).toEqual(expected);
    expect((await ch.checkQueue(bound)).messageCount).toBe(100);
  });

  it('rejects a publish the broker nacks (full queue, reject-publish) with SURETY_PUBLISH_NACKED', async () => {
    const capped = uniqueName('nack_capped');
    const exchange = uniqueName('nack');
    const { t } = await open('nack', {
      exchange,
      topology: {
        queues: [{ name: capped, type: 'classic', maxLength: 1, overflow: 'reject-publish' }],
        bindings: [{ exchange, queue: capped, pattern: '#' }],
      },
    });
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).resolves.toBeUndefined();
    const second = t.publish({ topic: 'order.created', message: wireMessage() });
    await expect(second).rejects.toBeInstanceOf(PublishError);
    await expect(second).rejects.toMatchObject({ code: 'SURETY_PUBLISH_NACKED' });
    expect((await ch.checkQueue(capped)).messageCount).toBe(1);
  });

  it('confirms 5,000 pipelined publishes, and measures 20,000', async () => {
    const queue = uniqueName('pipelined');
    const exchange = uniqueName('pipelined');
    const { t } = await open('pipelined', {
      exchange,
      topology: { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: '#' }] },
    });
    for (const n of [5_000, 20_000]) {
      const started = performance.now();
      // Far more than amqplib's write buffer holds (1,024 frames): this exercises the drain path too.
      const results = await outcomes(
        Array.from({ length: n }, () => t.publish({ topic: 'order.created', message: wireMessage() })),
      );
      const seconds = (performance.now() - started) / 1000;
      expect(results.filter((r) => r !== 'ok')).toEqual([]);
      console.log(
        `rabbitmq: ${n} pipelined confirmed publishes (quorum queue) in ${seconds.toFixed(2)} s = ${Math.round(n / seconds)} msg/s`,
      );
    }
    expect((await ch.checkQueue(queue)).messageCount).toBe(25_000);
  });

  it('close() waits for in-flight confirms, then rejects publishes with SURETY_TRANSPORT_CLOSED', async () => {
    const queue = uniqueName('close');
    const exchange = uniqueName('close');
    const { t } = await open('close', {
      exchange,
      topology: { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: '#' }] },
    });
    const inFlight = Array.from({ length: 2_000 }, () => t.publish({ topic: 'order.created', message: wireMessage() }));
    await t.close();
    expect(await outcomes(inFlight)).toEqual(inFlight.map(() => 'ok'));
    expect(t.isReady()).toBe(false);
    expect(await t.waitUntilReady(10)).toBe(false);
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).rejects.toMatchObject({
      code: 'SURETY_TRANSPORT_CLOSED',
    });
    await expect(t.subscribe({ group: 'g', topics: ['x'] }, async () => {})).rejects.toMatchObject({
      code: 'SURETY_TRANSPORT_CLOSED',
    });
    await t.close();
  });

  it('fails fast with SURETY_CONNECTION_LOST while it cannot connect, and says it is not ready', async () => {
    // Port 1 refuses connections: the transport keeps retrying in the background.
    const t = await createRabbitMqTransport({
      url: 'amqp://guest:guest@127.0.0.1:1',
      reconnect: { initialMs: 50, maxMs: 200 },
      startTimeoutMs: 300,
    });
    transports.push(t);
    expect(t.isReady()).toBe(false);
    expect(await t.waitUntilReady(300)).toBe(false);
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });
    await expect(t.subscribe({ group: 'g', topics: ['x'] }, async () => {})).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });
    await expect(t.inspectQueue('anything')).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
  });
});
