import { describe, expect, it } from 'vitest';
import { DriverMissingError, InvalidOptionError, PublishError } from '../../src/core/errors.js';
import type { WireMessage } from '../../src/core/wire.js';
import { channelRefusal, type ChannelRefusal } from '../../src/transports/rabbitmq/channel-refusal.js';
import { ConfirmTracker, type PendingPublish } from '../../src/transports/rabbitmq/confirm-tracker.js';
import type { AmqpMessage } from '../../src/transports/rabbitmq/driver.js';
import { loadAmqplib } from '../../src/transports/rabbitmq/driver.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { resolveOptions, type RabbitMqTransportOptions } from '../../src/transports/rabbitmq/options.js';
import { assignBlame } from '../../src/transports/rabbitmq/publish-blame.js';
import { fromAmqpMessage, redeliveriesOf, toPublishOptions } from '../../src/transports/rabbitmq/wire-mapping.js';
import { parkedDelivery } from '../../src/transports/rabbitmq/dead-letter-parking.js';
import { optionError as thrown } from '../support/option-error.js';
import { deadLetterSettings } from '../../src/transports/rabbitmq/queue-dead-letters.js';

const url = 'amqp://guest:guest@127.0.0.1:5672';

const optionError = (options: unknown) => thrown(() => resolveOptions(options as RabbitMqTransportOptions));

describe('rabbitmq options', () => {
  it('fills defaults into a frozen object and declares the default exchange', () => {
    const o = resolveOptions({ url });
    expect(Object.isFrozen(o)).toBe(true);
    expect(o).toMatchObject({
      exchange: 'surety',
      connectionName: 'surety',
      publishTimeoutMs: 10_000,
      closeTimeoutMs: 5_000,
      startTimeoutMs: 30_000,
      prefetch: 100,
    });
    expect(o.topology.exchanges).toEqual([{ name: 'surety', type: 'topic', durable: true }]);
    expect(o.route('order.created')).toEqual({ exchange: 'surety', routingKey: 'order.created' });
    expect(o.queueForGroup('billing', 'order.created')).toBe('billing');
    expect(resolveOptions({ url, declareExchange: false }).topology.exchanges).toEqual([]);
  });

  it('names the offending option and its allowed values', () => {
    expect(optionError({ url: 'http://x' }).option).toBe('url');
    expect(optionError({ url, publishTimeoutMs: 0 }).option).toBe('publishTimeoutMs');
    expect(optionError({ url, startTimeoutMs: -1 }).message).toBe(
      'invalid option "startTimeoutMs": must be an integer from 0 to 2147483647',
    );
    expect(optionError({ url, startTimeoutMs: 1.5 }).option).toBe('startTimeoutMs');
    expect(optionError({ url, prefetch: 70_000 }).message).toContain('from 1 to 65535');
    expect(optionError({ url, reconnect: { initialMs: 500, maxMs: 100 } }).option).toBe('reconnect.maxMs');
    expect(optionError({ url, logger: { info: () => {} } }).option).toBe('logger');
    expect(optionError({ url, route: 'x' }).option).toBe('route');
    const type = optionError({ url, topology: { queues: [{ name: 'q', type: 'lazy' }] } });
    expect(type.option).toBe('topology.queues[0].type');
    expect(type.message).toContain('"quorum", "classic"');
    expect(optionError({ url, topology: { queues: [{ name: 'q', type: 'classic', deliveryLimit: 3 }] } }).option).toBe(
      'topology.queues[0].deliveryLimit',
    );
    expect(optionError({ url, topology: { queues: [{ name: 'q', durable: false }] } }).option).toBe(
      'topology.queues[0].durable',
    );
    expect(optionError({ url, topology: { queues: [{ name: 'q', overflow: 'reject-publish-dlx' }] } }).option).toBe(
      'topology.queues[0].overflow',
    );
    expect(optionError({ url, topology: { bindings: [{ exchange: 'e', pattern: '#' }] } }).option).toBe(
      'topology.bindings[0].queue',
    );
  });

  it('maps queue options to x-arguments', () => {
    const o = resolveOptions({
      url,
      declareExchange: false,
      topology: {
        queues: [
          {
            name: 'work',
            deliveryLimit: 5,
            deadLetterExchange: 'dlx',
            deadLetterRoutingKey: 'dead',
            arguments: { 'x-max-length-bytes': 10 },
          },
          { name: 'capped', type: 'classic', maxLength: 1, overflow: 'reject-publish', durable: false },
        ],
      },
    });
    expect(o.topology.queues).toEqual([
      {
        name: 'work',
        durable: true,
        arguments: {
          'x-max-length-bytes': 10,
          'x-queue-type': 'quorum',
          'x-dead-letter-exchange': 'dlx',
          'x-dead-letter-routing-key': 'dead',
          'x-delivery-limit': 5,
        },
        parkingQueue: null,
      },
      {
        name: 'capped',
        durable: false,
        arguments: { 'x-queue-type': 'classic', 'x-max-length': 1, 'x-overflow': 'reject-publish' },
        parkingQueue: null,
      },
    ]);
  });

  it('maps singleActiveConsumer to x-single-active-consumer on quorum and classic queues, only when on', () => {
    const o = resolveOptions({
      url,
      declareExchange: false,
      topology: {
        queues: [
          { name: 'ledger', singleActiveConsumer: true },
          { name: 'audit', type: 'classic', singleActiveConsumer: true },
          { name: 'billing', singleActiveConsumer: false },
        ],
      },
    });
    expect(o.topology.queues.map((q) => q.arguments)).toEqual([
      {
        'x-queue-type': 'quorum',
        'x-single-active-consumer': true,
        'x-dead-letter-exchange': 'surety.dead-letters',
        'x-dead-letter-routing-key': 'ledger',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
      { 'x-queue-type': 'classic', 'x-single-active-consumer': true },
      {
        'x-queue-type': 'quorum',
        'x-dead-letter-exchange': 'surety.dead-letters',
        'x-dead-letter-routing-key': 'billing',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      }, // false declares nothing: such a queue stays equivalent to one declared before
    ]);
    const bad = optionError({ url, topology: { queues: [{ name: 'q', singleActiveConsumer: 'yes' }] } });
    expect(bad.option).toBe('topology.queues[0].singleActiveConsumer');
    expect(bad.message).toContain('must be true or false');
  });

  it('parks quorum queues without a dead-letter exchange of their own, unless told not to', () => {
    const o = resolveOptions({
      url,
      topology: {
        queues: [
          { name: 'billing', deliveryLimit: 2, maxLength: 100 },
          { name: 'own', arguments: { 'x-dead-letter-exchange': 'mine' } },
          { name: 'policy', deadLetterParking: false, overflow: 'drop-head' },
          { name: 'plain', type: 'classic' },
        ],
      },
    });
    expect(o.topology.deadLetterParking).toBe(true);
    expect(o.topology.queues.map((q) => [q.name, q.parkingQueue])).toEqual([
      ['billing', 'billing.dead-letters'],
      ['own', null],
      ['policy', null],
      ['plain', null],
    ]);
    expect(o.topology.queues[0]!.arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-delivery-limit': 2,
      'x-max-length': 100,
      'x-dead-letter-exchange': 'surety.dead-letters',
      'x-dead-letter-routing-key': 'billing',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
    expect(o.topology.queues[2]!.arguments).toEqual({ 'x-queue-type': 'quorum', 'x-overflow': 'drop-head' });
    const off = resolveOptions({ url, topology: { deadLetterParking: false, queues: [{ name: 'billing' }] } });
    expect(off.topology).toMatchObject({ deadLetterParking: false, queues: [{ parkingQueue: null }] });
  });

  it('refuses parking settings that would lose or misroute a message, naming the option', () => {
    const bad = (queue: Record<string, unknown>, option: string, detail: RegExp) => {
      const err = optionError({ url, topology: { queues: [{ name: 'q', ...queue }] } });
      expect(err).toMatchObject({ code: 'SURETY_INVALID_OPTION', option });
      expect(err.message).toMatch(detail);
    };
    bad({ overflow: 'drop-head' }, 'topology.queues[0].overflow', /"reject-publish" with dead-letter parking/);
    bad({ arguments: { 'x-overflow': 'drop-head' } }, 'topology.queues[0].overflow', /reject-publish/);
    bad({ deadLetterRoutingKey: 'k' }, 'topology.queues[0].deadLetterRoutingKey', /needs "deadLetterExchange"/);
    bad({ deadLetterParking: true, deadLetterExchange: 'x' }, 'topology.queues[0].deadLetterParking', /own/);
    bad({ deadLetterParking: true, type: 'classic' }, 'topology.queues[0].deadLetterParking', /"quorum"/);
    bad({ deadLetterParking: 'yes' }, 'topology.queues[0].deadLetterParking', /true or false/);
    bad({ name: 'q'.repeat(243) }, 'topology.queues[0].name', /at most 242 bytes/);
    expect(optionError({ url, topology: { deadLetterParking: 1 } }).option).toBe('topology.deadLetterParking');
  });

  it('rejects bad options before loading the driver or connecting', async () => {
    await expect(createRabbitMqTransport({ url: 'nope' })).rejects.toBeInstanceOf(InvalidOptionError);
  });
});

describe('rabbitmq driver loading', () => {
  it('turns a missing amqplib into DriverMissingError', async () => {
    const missing = Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' });
    const err = await loadAmqplib(() => Promise.reject(missing)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverMissingError);
    expect(err).toMatchObject({ code: 'SURETY_DRIVER_MISSING', cause: missing });
    expect((err as Error).message).toContain('amqplib');
  });

  it('passes other import failures through and loads the real module', async () => {
    const broken = new SyntaxError('bad');
    await expect(loadAmqplib(() => Promise.reject(broken))).rejects.toBe(broken);
    expect(typeof (await loadAmqplib()).connect).toBe('function');
  });
});

describe('rabbitmq wire mapping', () => {
  const wire: WireMessage = {
    id: '0190b5a0-0000-7000-8000-000000000001',
    headers: { 'surety-type': 'order.created', 'surety-created-at': '2024-05-01T12:00:00.500Z', 'x-tenant': 'acme' },
    body: Buffer.from('{"total":42}'),
  };

  it('publishes persistent, mandatory JSON with the native id, type and timestamp', () => {
    expect(toPublishOptions(wire)).toEqual({
      mandatory: true,
      deliveryMode: 2,
      contentType: 'application/json',
      messageId: wire.id,
      type: 'order.created',
      timestamp: Date.parse('2024-05-01T12:00:00Z') / 1000,
      headers: wire.headers,
    });
  });

  it('reads a delivery back into a wire message with text headers only', () => {
    const msg: AmqpMessage = {
      content: wire.body,
      fields: { deliveryTag: 1, redelivered: false, exchange: 'e', routingKey: 'order.created' },
      properties: {
        messageId: wire.id,
        headers: {
          'x-tenant': Buffer.from('acme'),
          'surety-type': 'order.created',
          'x-delivery-count': 2,
          'x-death': [{}],
        },
      },
    };
    expect(fromAmqpMessage(msg)).toEqual({
      id: wire.id,
      headers: { 'x-tenant': 'acme', 'surety-type': 'order.created' },
      body: wire.body,
    });
    expect(redeliveriesOf(msg)).toBe(2);
    expect(redeliveriesOf({ ...msg, properties: {}, fields: { ...msg.fields, redelivered: true } })).toBe(1);
    expect(redeliveriesOf({ ...msg, properties: {} })).toBe(0);
  });
});

function pendingPublish(id: string, topic = 't', exchange = 'ex'): PendingPublish {
  return {
    out: { topic, message: { id, headers: {}, body: Buffer.alloc(0) } },
    deadline: Number.MAX_SAFE_INTEGER,
    exchange,
    routingKey: topic,
    returned: false,
    republished: 0,
    settled: false,
    resolve: () => {},
    reject: () => {},
  };
}

describe('rabbitmq confirm tracking', () => {
  type Outcome = 'pending' | 'ok' | string;

  function harness() {
    const outcomes = new Map<PendingPublish, Outcome>();
    const tracker = new ConfirmTracker((p, err) => {
      p.settled = true;
      outcomes.set(p, err ? err.code : 'ok');
    });
    const send = (id: string, topic = 't'): PendingPublish => {
      const p = pendingPublish(id, topic);
      outcomes.set(p, 'pending');
      tracker.sent(p);
      return p;
    };
    return { tracker, send, outcome: (p: PendingPublish) => outcomes.get(p) };
  }

  it('fails exactly the returned publish, even when another publish has the same id', () => {
    const { tracker, send, outcome } = harness();
    const routed = send('same', 'bound');
    const other = send('other', 'nowhere');
    const unroutable = send('same', 'nowhere');
    const again = send('same', 'nowhere');
    // Returns come in publish order and carry exchange, routing key and message id.
    expect(tracker.returned({ exchange: 'ex', routingKey: 'nowhere', messageId: 'same' })).toBe(true);
    tracker.acked(4, true);
    expect([routed, other, unroutable, again].map(outcome)).toEqual(['ok', 'ok', 'SURETY_PUBLISH_UNROUTABLE', 'ok']);
    expect(tracker.size).toBe(0);
    expect(tracker.returned({ exchange: 'ex', routingKey: 'nowhere', messageId: 'same' })).toBe(false);
  });

  it('settles single and multiple acks and nacks by delivery tag', () => {
    const { tracker, send, outcome } = harness();
    const ps = ['a', 'b', 'c', 'd'].map((id) => send(id));
    tracker.acked(2, false);
    expect(ps.map(outcome)).toEqual(['pending', 'ok', 'pending', 'pending']);
    tracker.nacked(3, true);
    expect(ps.map(outcome)).toEqual(['SURETY_PUBLISH_NACKED', 'ok', 'SURETY_PUBLISH_NACKED', 'pending']);
    tracker.failAll(() => new PublishError('SURETY_CONNECTION_LOST', 'gone'));
    expect(outcome(ps[3]!)).toBe('SURETY_CONNECTION_LOST');
    expect(tracker.returned({ exchange: 'ex', routingKey: 't', messageId: 'a' })).toBe(false);
  });

  it('hands over what a closed channel left unconfirmed, split at the last publish the broker confirmed', () => {
    const { tracker, send } = harness();
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((id) => send(id));
    tracker.acked(1, false);
    tracker.acked(3, false); // b (tag 2) was handled before c: its ack is merely late
    e!.settled = true; // timed out: nothing to hand over
    const { processed, unknown } = tracker.takeUnconfirmed();
    expect(processed).toEqual([b]);
    expect(unknown).toEqual([d]);
    expect(tracker.size).toBe(0);
    expect([a, c].every((p) => p!.settled)).toBe(true);
  });
});

describe('rabbitmq channel refusals', () => {
  /** The error amqplib emits on a channel the broker closed (see its channel.js, ChannelClose). */
  const closeError = (code: number, replyText: string, classId = 60, methodId = 40) =>
    Object.assign(new Error(`Channel closed by server: ${code} (X) with message "${replyText}"`), {
      code,
      classId,
      methodId,
    });

  it('reads the reply code, the reply text and, on a 404 or 403 publish, the exchange', () => {
    expect(channelRefusal(closeError(404, "NOT_FOUND - no exchange 'orders.v2' in vhost '/'"))).toMatchObject({
      replyCode: 404,
      replyText: "NOT_FOUND - no exchange 'orders.v2' in vhost '/'",
      byPublish: true,
      exchange: 'orders.v2',
    });
    expect(
      channelRefusal(closeError(403, "ACCESS_REFUSED - cannot publish to internal exchange 'it's' in vhost 'v'")),
    ).toMatchObject({ replyCode: 403, exchange: "it's" });
    expect(
      channelRefusal(closeError(403, "ACCESS_REFUSED - access to exchange 'x' in vhost '/' refused for user 'u'")),
    ).toMatchObject({ exchange: 'x' });
    const precondition = channelRefusal(closeError(406, 'PRECONDITION_FAILED - fast reply consumer does not exist'));
    expect(precondition).toMatchObject({ replyCode: 406, byPublish: true, exchange: undefined });
    // A queue declaration's 404 names a queue and answers no publish.
    expect(channelRefusal(closeError(404, "NOT_FOUND - no queue 'q' in vhost '/'", 50, 10))).toMatchObject({
      byPublish: false,
      exchange: undefined,
    });
  });

  it('is undefined for an error without a reply code (the connection went)', () => {
    expect(channelRefusal(new Error('Connection closed'))).toBeUndefined();
    expect(channelRefusal(undefined)).toBeUndefined();
  });

  const refusal = (over: Partial<ChannelRefusal> = {}): ChannelRefusal => ({
    replyCode: 406,
    replyText: 'PRECONDITION_FAILED - x',
    byPublish: true,
    exchange: undefined,
    cause: undefined,
    ...over,
  });

  it('refuses every unknown publish to the exchange the reply names, and never a processed one', () => {
    const processed = [pendingPublish('p1', 't', 'gone')];
    const unknown = [pendingPublish('u1'), pendingPublish('u2', 't', 'gone'), pendingPublish('u3', 't', 'gone')];
    const blame = assignBlame(refusal({ replyCode: 404, exchange: 'gone' }), { processed, unknown });
    expect(blame.refused.map((p) => p.out.message.id)).toEqual(['u2', 'u3']);
    expect(blame.innocent.map((p) => p.out.message.id)).toEqual(['p1', 'u1']);
    expect(blame.suspects).toEqual([]);
  });

  it('blames the only unknown publish, and suspects several when the reply names nothing', () => {
    const processed = [pendingPublish('p1')];
    const alone = assignBlame(refusal(), { processed, unknown: [pendingPublish('u1')] });
    expect(alone.refused.map((p) => p.out.message.id)).toEqual(['u1']);
    expect(alone.innocent).toEqual(processed);
    const unknown = [pendingPublish('u1'), pendingPublish('u2')];
    // A named exchange none of them was written to names nothing useful either.
    const several = assignBlame(refusal({ replyCode: 404, exchange: 'other' }), { processed, unknown });
    expect(several).toEqual({ refused: [], innocent: processed, suspects: unknown });
  });

  it('blames nobody for a close that answers no publish', () => {
    const unknown = [pendingPublish('u1')];
    expect(assignBlame(refusal({ byPublish: false }), { processed: [], unknown })).toEqual({
      refused: [],
      innocent: unknown,
      suspects: [],
    });
  });
});

describe('rabbitmq dead-letter parking', () => {
  it("reads why a parked delivery left its queue, and its first topic, from the broker's x-death", () => {
    const msg: AmqpMessage = {
      content: Buffer.from('{}'),
      fields: { deliveryTag: 1, redelivered: false, exchange: 'surety.dead-letters', routingKey: 'billing' },
      properties: {
        headers: {
          'x-first-death-reason': 'delivery_limit',
          'x-death': [
            { queue: 'other', reason: 'expired', 'routing-keys': ['x'] },
            { queue: 'billing', reason: 'delivery_limit', count: 1, 'routing-keys': ['order.created'] },
          ],
        },
      },
    };
    expect(parkedDelivery(msg, 'billing', 2)).toEqual({
      exhausted: { reason: 'delivery_limit', deliveries: 3 },
      topic: 'order.created',
    });
    expect(parkedDelivery(msg, 'billing', null).exhausted.deliveries).toBeNull();
    // Without an x-death entry of its own queue: the first death's reason, the routing key as topic.
    expect(parkedDelivery(msg, 'elsewhere', 2)).toEqual({
      exhausted: { reason: 'delivery_limit', deliveries: 3 },
      topic: 'billing',
    });
  });

  it("derives a queue's effective delivery limit and dead-letter target as RabbitMQ applies them", () => {
    const quorum = (args: Record<string, unknown>, serverVersion: string | null, policy?: Record<string, unknown>) =>
      deadLetterSettings({
        name: 'billing',
        type: 'quorum',
        arguments: { 'x-queue-type': 'quorum', ...args },
        policy,
        serverVersion,
      });
    expect(quorum({}, '3.10.8')).toEqual({ deliveryLimit: null, deadLetters: null });
    expect(quorum({}, '4.0.5')).toEqual({ deliveryLimit: 20, deadLetters: null }); // RabbitMQ 4's default
    expect(quorum({ 'x-delivery-limit': -1 }, '4.1.0')).toEqual({ deliveryLimit: null, deadLetters: null });
    expect(quorum({ 'x-delivery-limit': -1 }, '3.13.7').deliveryLimit).toBe(0); // 3.x gives up at once
    expect(quorum({ 'x-delivery-limit': 9 }, null, { 'delivery-limit': 4 }).deliveryLimit).toBe(4);
    expect(quorum({ 'x-dead-letter-exchange': 'surety.dead-letters' }, '4.0.5')).toEqual({
      deliveryLimit: 20,
      deadLetters: { exchange: 'surety.dead-letters', parkingQueue: 'billing.dead-letters' },
    });
    expect(quorum({}, '3.13.7', { 'dead-letter-exchange': 'dlx' }).deadLetters).toEqual({
      exchange: 'dlx',
      parkingQueue: null,
    });
    expect(deadLetterSettings({ name: 'c', type: 'classic', arguments: {}, serverVersion: '4.0.5' })).toEqual({
      deliveryLimit: null,
      deadLetters: null,
    });
    expect(deadLetterSettings({ name: 'c', type: null, arguments: null, serverVersion: '4.0.5' })).toEqual({});
  });
});
