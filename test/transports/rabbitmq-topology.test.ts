import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Channel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WireMessage } from '../../src/core/wire.js';
import type { Logger } from '../../src/core/logger.js';
import {
  createRabbitMqTransport,
  declareTopology,
  parkingQueueName,
  QueueDeclarationRefusedError,
  type RabbitMqTransport,
  type RabbitMqTransportOptions,
} from '../../src/transports/rabbitmq/index.js';
import { testEnv, uniqueName } from '../support/env.js';
import { adminAmqp } from '../support/rabbit-admin.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);

function wireMessage(): WireMessage {
  return { id: randomUUID(), headers: { 'surety-type': 'order.created' }, body: Buffer.from('{"total":42}') };
}

/** The broker's own account of a queue's type and arguments. */
async function describeQueue(name: string): Promise<string> {
  return (await describeQueues([name]))[0]!;
}

/** The same for several queues, with one (slow) `rabbitmqctl` run. */
async function describeQueues(names: readonly string[]): Promise<string[]> {
  const { stdout } = await run('rabbitmqctl', ['list_queues', 'name', 'type', 'arguments', '-q']);
  const lines = stdout.split('\n');
  return names.map((name) => lines.find((line) => line.startsWith(`${name}\t`)) ?? '');
}

describe('rabbitmq transport: topology', () => {
  let ch: Channel;
  let cleanups: Array<() => Promise<unknown>> = [];

  const amqp = adminAmqp();
  beforeEach(async () => {
    ch = amqp.channel;
    ch.on('error', () => {});
  });
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
    await ch.close().catch(() => {}); // a refused declaration may have closed it
  });

  /** Deletes the exchange, or the queue and its parking queue (if Surety declared one), after the test. */
  function forget(kind: 'queue' | 'exchange', name: string): void {
    cleanups.push(async () => {
      const c = await amqp.connection.createChannel();
      if (kind === 'queue') {
        await c.deleteQueue(name);
        await c.deleteQueue(parkingQueueName(name));
      } else await c.deleteExchange(name);
      await c.close();
    });
  }

  async function open(options: Partial<RabbitMqTransportOptions> & { exchange: string }): Promise<RabbitMqTransport> {
    forget('exchange', options.exchange);
    for (const q of options.topology?.queues ?? []) forget('queue', q.name);
    for (const e of options.topology?.exchanges ?? []) forget('exchange', e.name);
    const t = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      connectionName: uniqueName('topology'),
      ...options,
    });
    cleanups.push(() => t.close());
    expect(await t.waitUntilReady(10_000)).toBe(true);
    return t;
  }

  it('declares a quorum queue with a delivery limit that dead-letters after the limit of retries', async () => {
    const exchange = uniqueName('dlx_main');
    const dlx = uniqueName('dlx');
    const work = uniqueName('dlx_work');
    const dead = uniqueName('dlx_dead');
    const t = await open({
      exchange,
      topology: {
        exchanges: [{ name: dlx, type: 'fanout' }],
        queues: [
          { name: work, deliveryLimit: 2, deadLetterExchange: dlx },
          { name: dead, type: 'classic' },
        ],
        bindings: [
          { exchange, queue: work, pattern: 'order.*' },
          { exchange: dlx, queue: dead, pattern: '' },
        ],
      },
    });
    const line = await describeQueue(work);
    expect(line).toContain('quorum');
    expect(line).toContain('{"x-delivery-limit",2}');
    expect(line).toContain(`{"x-dead-letter-exchange","${dlx}"}`);

    const seen: number[] = [];
    await t.subscribe({ group: work, topics: ['order.created'] }, async (d) => {
      seen.push(d.redeliveries);
      await d.retry();
    });
    const sent = wireMessage();
    await t.publish({ topic: 'order.created', message: sent });

    await waitFor('the dead letter', async () => (await t.inspectQueue(dead))?.messageCount === 1, 15_000);
    expect(seen).toEqual([0, 1, 2]);
    const dl = await ch.get(dead, { noAck: true });
    if (dl === false) throw new Error('dead-letter queue is empty');
    expect(dl.properties.messageId).toBe(sent.id);
    expect(dl.properties.headers?.['x-first-death-queue']).toBe(work);
    expect(dl.properties.headers?.['x-first-death-reason']).toBe('delivery_limit');
  });

  it('inspectQueue reports message and consumer counts, or undefined for a missing queue', async () => {
    const exchange = uniqueName('inspect');
    const queue = uniqueName('inspect_q');
    const t = await open({
      exchange,
      topology: { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: '#' }] },
    });
    await Promise.all([1, 2, 3].map(() => t.publish({ topic: 'order.created', message: wireMessage() })));
    expect(await t.inspectQueue(queue)).toEqual({ messageCount: 3, consumerCount: 0 });
    expect(await t.inspectQueue(uniqueName('missing'))).toBeUndefined();

    const subscription = await t.subscribe({ group: queue, topics: ['order.created'], prefetch: 1 }, async () => {});
    await waitFor('one message handed out', async () => (await t.inspectQueue(queue))?.messageCount === 2, 10_000);
    expect(await t.inspectQueue(queue)).toEqual({ messageCount: 2, consumerCount: 1 });
    await subscription.close();
  });

  it('declareTopology declares on any channel; a conflicting redeclaration is refused by the broker', async () => {
    const exchange = uniqueName('declare');
    const queue = uniqueName('declare_q');
    forget('exchange', exchange);
    forget('queue', queue);
    // Dropping the oldest message of a full queue is a choice only without dead-letter parking.
    const spec = { name: queue, maxLength: 10, overflow: 'drop-head', deadLetterParking: false } as const;
    await declareTopology(ch, {
      exchanges: [{ name: exchange, type: 'direct' }],
      queues: [spec],
      bindings: [{ exchange, queue, pattern: 'k' }],
    });
    await declareTopology(ch, { queues: [spec] }); // idempotent
    const line = await describeQueue(queue);
    expect(line).toContain('{"x-max-length",10}');
    expect(line).not.toContain('x-dead-letter-exchange');
    const refused = await declareTopology(ch, { queues: [{ name: queue, type: 'classic' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueDeclarationRefusedError);
    expect(refused).toMatchObject({ code: 'SURETY_INVALID_OPTION', replyCode: 406, queue, setting: 'x-max-length' });
    expect((refused as Error).message).toContain(
      `RabbitMQ refused to declare queue "${queue}": it exists with another x-max-length (currently 10)`,
    );
  });

  it('parks what its quorum queues give up on: topology queues and the group queues subscriptions declare', async () => {
    const exchange = uniqueName('parking');
    const listed = uniqueName('parking_listed');
    const group = uniqueName('parking_group');
    forget('queue', group);
    const t = await open({ exchange, topology: { queues: [{ name: listed, deliveryLimit: 4 }] } });
    await (await t.subscribe({ group, topics: ['order.created'] }, async (d) => d.ack())).close();
    const [listedLine, groupLine, ...parkingLines] = await describeQueues([
      listed,
      group,
      parkingQueueName(listed),
      parkingQueueName(group),
    ]);
    expect(listedLine).toContain('{"x-delivery-limit",4}');
    for (const [queue, line] of [
      [listed, listedLine!],
      [group, groupLine!],
    ] as const) {
      expect(line).toContain('{"x-dead-letter-exchange","surety.dead-letters"}');
      expect(line).toContain(`{"x-dead-letter-routing-key","${queue}"}`);
      expect(line).toContain('{"x-dead-letter-strategy","at-least-once"}');
      expect(line).toContain('{"x-overflow","reject-publish"}');
    }
    for (const line of parkingLines) expect(line).toMatch(/\tquorum\t.*\{"x-delivery-limit",1000000\}/);
    for (const queue of [listed, group]) {
      const parking = parkingQueueName(queue);
      // The parking queue is bound to Surety's dead-letter exchange by the source queue's name.
      ch.publish('surety.dead-letters', queue, Buffer.from('{}'), { persistent: true });
      await waitFor(`a message routed into ${parking}`, async () => (await ch.checkQueue(parking)).messageCount === 1);
    }
  });

  it('an existing queue without parking is refused with an error that says what to do; the opt-out accepts it', async () => {
    const exchange = uniqueName('unparked');
    const group = uniqueName('unparked_q');
    const listed = uniqueName('unparked_listed');
    forget('queue', group);
    forget('queue', listed);
    // As an earlier release declared them: quorum, nothing else.
    for (const q of [group, listed])
      await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const t = await open({ exchange });
    const refused = await t.subscribe({ group, topics: ['order.created'] }, async () => {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueDeclarationRefusedError);
    expect(refused).toMatchObject({ code: 'SURETY_INVALID_OPTION', queue: group, setting: 'x-dead-letter-exchange' });
    const message = (refused as Error).message;
    expect(message).toContain(`RabbitMQ refused to declare queue "${group}": it exists with no x-dead-letter-exchange`);
    expect(message).toContain('dead-letter parking');
    expect(message).toContain('deadLetterParking: false');

    // A topology queue: the transport stays unready and logs the same explanation on every attempt.
    const errors: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (obj: object) => void errors.push(String((obj as { err?: unknown }).err)),
    };
    const stuck = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      topology: { queues: [{ name: listed }] },
      logger,
      reconnect: { initialMs: 50, maxMs: 200 },
    });
    cleanups.push(() => stuck.close());
    await waitFor('the refusal logged', () => errors.length > 0);
    expect(stuck.isReady()).toBe(false);
    expect(errors[0]).toContain(
      `RabbitMQ refused to declare queue "${listed}": it exists with no x-dead-letter-exchange`,
    );

    const optedOut = await open({ exchange, topology: { deadLetterParking: false, queues: [{ name: listed }] } });
    await (await optedOut.subscribe({ group, topics: ['order.created'] }, async (d) => d.ack())).close();
  });

  for (const type of ['quorum', 'classic'] as const) {
    it(`declares a ${type} queue with single active consumer: one subscriber gets everything, the other takes over`, async () => {
      const exchange = uniqueName(`sac_${type}`);
      const queue = uniqueName(`sac_${type}_q`);
      const topology = {
        queues: [{ name: queue, type, singleActiveConsumer: true }],
        bindings: [{ exchange, queue, pattern: '#' }],
      };
      const a = await open({ exchange, topology });
      const b = await open({ exchange, topology }); // a second process of the group declares the same
      expect(await describeQueue(queue)).toContain('{"x-single-active-consumer",true}');
      const got: string[] = [];
      const subscribe = (t: RabbitMqTransport, name: string) =>
        t.subscribe({ group: queue, topics: ['order.created'], prefetch: 5 }, async (d) => {
          got.push(name);
          await d.ack();
        });
      const first = await subscribe(a, 'a');
      await subscribe(b, 'b');
      for (let i = 0; i < 20; i++) await a.publish({ topic: 'order.created', message: wireMessage() });
      await waitFor('20 delivered', () => got.length === 20, 10_000);
      expect(new Set(got)).toEqual(new Set(['a'])); // without it the broker round-robins between the two
      await first.close();
      for (let i = 0; i < 5; i++) await b.publish({ topic: 'order.created', message: wireMessage() });
      await waitFor('5 more delivered', () => got.length === 25, 10_000);
      expect(got.slice(20)).toEqual(['b', 'b', 'b', 'b', 'b']);
    });
  }

  it('subscribing to an existing queue of another shape fails with a clear error instead of retrying forever', async () => {
    const exchange = uniqueName('conflict');
    const queue = uniqueName('conflict_q');
    forget('queue', queue);
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'classic' } });
    const t = await open({ exchange });
    const attempt = t.subscribe({ group: queue, topics: ['order.created'] }, async () => {});
    await expect(attempt).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
    // Listing the queue in the topology tells the transport not to declare it.
    const t2 = await open({ exchange, topology: { queues: [{ name: queue, type: 'classic' }] } });
    const subscription = await t2.subscribe({ group: queue, topics: ['order.created'] }, async (d) => d.ack());
    await subscription.close();
  });

  it('consumes several topics of a group from per-topic queues when queueForGroup says so', async () => {
    const exchange = uniqueName('per_topic');
    const queueOf = (group: string, topic: string): string => `${group}.${topic}`;
    const group = uniqueName('per_topic_group');
    for (const topic of ['order.created', 'order.paid']) forget('queue', queueOf(group, topic));
    const t = await open({ exchange, queueForGroup: queueOf });
    const topics: string[] = [];
    await t.subscribe({ group, topics: ['order.created', 'order.paid'] }, async (d) => {
      topics.push(d.topic);
      await d.ack();
    });
    await t.publish({ topic: 'order.created', message: wireMessage() });
    await t.publish({ topic: 'order.paid', message: wireMessage() });
    await waitFor('both messages', () => topics.length === 2, 10_000);
    expect(topics.sort()).toEqual(['order.created', 'order.paid']);
    expect(await t.inspectQueue(queueOf(group, 'order.paid'))).toEqual({ messageCount: 0, consumerCount: 1 });
  });
});
