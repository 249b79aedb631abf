import { randomUUID } from 'node:crypto';
import type { Channel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { WireMessage } from '../../src/core/wire.js';
import {
  createRabbitMqTransport,
  type RabbitMqTransport,
  type RabbitMqTransportOptions,
} from '../../src/transports/rabbitmq/index.js';
import { testEnv, uniqueName } from '../support/env.js';
import { adminAmqp } from '../support/rabbit-admin.js';
import { RabbitProbe } from '../support/rabbit.js';

/**
 * RabbitMQ closes the whole channel when it refuses one publish. These publish bursts with a few
 * refused messages among them, pipelined on one channel, and check that only those fail.
 */
describe('rabbitmq transport: a publish the broker refuses fails alone', () => {
  let ch: Channel;
  let probe: RabbitProbe;
  let transport: RabbitMqTransport | undefined;

  const amqp = adminAmqp();
  beforeEach(async () => {
    ch = amqp.channel;
    probe = await RabbitProbe.open('refusals');
  });
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    await probe.close();
    await ch.close();
  });

  async function open(options: Partial<RabbitMqTransportOptions> = {}): Promise<RabbitMqTransport> {
    transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange: probe.exchange,
      connectionName: uniqueName('refusals'),
      ...options,
    });
    expect(await transport.waitUntilReady(10_000)).toBe(true);
    return transport;
  }

  const message = (headers: Record<string, string> = {}): WireMessage => ({
    id: randomUUID(),
    headers: { 'surety-type': 'order.created', ...headers },
    body: Buffer.from('{"total":42}'),
  });

  /** `n` publishes at once, every `every`-th (from the `first`) made by `bad`; their outcomes and ids. */
  async function burst(
    t: RabbitMqTransport,
    n: number,
    bad: (i: number) => { topic: string; message: WireMessage } | undefined,
  ) {
    const sent = Array.from({ length: n }, (_, i) => bad(i) ?? { topic: 'order.created', message: message() });
    const outcomes = await Promise.all(
      sent.map((out) =>
        t.publish(out).then(
          () => 'ok',
          (err: unknown) =>
            err instanceof PublishError ? `${err.code}: ${err.message}` : `unexpected: ${String(err)}`,
        ),
      ),
    );
    return { sent, outcomes };
  }

  /** Every copy in `queue`: the distinct ids and how many copies arrived beyond one each. */
  async function arrived(queue: string, expected: number) {
    const copies = await probe.collect(queue, expected);
    copies.push(...(await probe.drain(queue))); // every publish is settled: nothing more is on its way
    return { ids: new Set(copies), duplicates: copies.length - new Set(copies).size };
  }

  it('406, whose reply names nothing: only the refused publishes fail, with the reply text; the others arrive', async () => {
    const queue = await probe.bindQueue('#');
    const t = await open();
    // RabbitMQ takes a CC header only as an array: as text it closes the channel with a 406.
    const culprit = (i: number) =>
      i % 100 === 37 ? { topic: 'order.created', message: message({ CC: 'x' }) } : undefined;
    const { sent, outcomes } = await burst(t, 400, culprit);

    const bad = sent.flatMap((_, i) => (culprit(i) ? [i] : []));
    expect(bad).toHaveLength(4);
    for (const i of bad) {
      expect(outcomes[i]).toBe(
        `SURETY_PUBLISH_REFUSED: RabbitMQ refused message ${sent[i]!.message.id} to "order.created": ` +
          'PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,"CC",longstr}',
      );
    }
    expect(outcomes.filter((_, i) => !bad.includes(i))).toEqual(Array.from({ length: 396 }, () => 'ok'));
    const good = sent.filter((_, i) => !bad.includes(i)).map((s) => s.message.id);
    const { ids, duplicates } = await arrived(queue, good.length);
    expect(ids).toEqual(new Set(good));
    console.log(`rabbitmq 406 burst: ${duplicates} duplicate copies of ${good.length} confirmed messages`);
    await expect(t.publish({ topic: 'order.created', message: message() })).resolves.toBeUndefined();
  });

  it('403, a publish to an internal exchange: only those fail, with the reply text; the others arrive', async () => {
    const queue = await probe.bindQueue('#');
    const internal = uniqueName('internal');
    await ch.assertExchange(internal, 'topic', { internal: true, durable: false });
    try {
      const t = await open({
        route: (topic) => ({ exchange: topic === 'audit.kept' ? internal : probe.exchange, routingKey: topic }),
      });
      const culprit = (i: number) => (i % 80 === 11 ? { topic: 'audit.kept', message: message() } : undefined);
      const { sent, outcomes } = await burst(t, 400, culprit);

      const bad = sent.flatMap((_, i) => (culprit(i) ? [i] : []));
      expect(bad).toHaveLength(5);
      for (const i of bad) {
        expect(outcomes[i]).toBe(
          `SURETY_PUBLISH_REFUSED: RabbitMQ refused message ${sent[i]!.message.id} to "audit.kept": ` +
            `ACCESS_REFUSED - cannot publish to internal exchange '${internal}' in vhost '/'`,
        );
      }
      expect(outcomes.filter((_, i) => !bad.includes(i))).toEqual(Array.from({ length: 395 }, () => 'ok'));
      const good = sent.filter((_, i) => !bad.includes(i)).map((s) => s.message.id);
      const { ids, duplicates } = await arrived(queue, good.length);
      expect(ids).toEqual(new Set(good));
      console.log(`rabbitmq 403 burst: ${duplicates} duplicate copies of ${good.length} confirmed messages`);
    } finally {
      await ch.deleteExchange(internal);
    }
  });
});
