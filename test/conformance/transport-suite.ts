/**
 * Transport conformance suite: the behaviour every broker adapter must show, run by each adapter's
 * own test file (like Watermill's universal pub/sub tests). An adapter is done when this is green.
 *
 * Usage, in `test/transports/<broker>.test.ts`:
 *
 * ```ts
 * runTransportConformance('rabbitmq', async () => {
 *   const transport = await createRabbitTransport({ url });
 *   return {
 *     transport,
 *     uniqueTopic: (label) => uniqueName(label),
 *     prepareTopic: (topic, group) => declareAndBindQueue(topic, group), // no-op where nothing routes
 *     openAnother: () => createRabbitTransport({ url }), // a second client of the same broker
 *     teardown: () => closeAllAndDeleteQueues(),
 *   };
 * }, { unroutableDetection: true, persistent: true, redeliveryCount: true, checkpoint: false, orderedPerTopic: true });
 * ```
 *
 * The factory runs before every test and must give an isolated transport; `teardown` runs after it
 * and must tolerate a transport the test already closed. Topics come from `uniqueTopic`; a topic
 * is published to only after `prepareTopic(topic, group)` for every group that will read it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/core/envelope.js';
import { PublishError } from '../../src/core/errors.js';
import type { WireMessage } from '../../src/core/wire.js';
import type { Delivery, SubscribeOptions, Subscription, Transport } from '../../src/ports/transport.js';

export interface TransportFixture {
  readonly transport: Transport;
  uniqueTopic(label: string): string;
  /** Makes `topic` deliverable to `group` (declare and bind a queue, create a stream...). */
  prepareTopic(topic: string, group: string): Promise<void>;
  /** A second transport on the same broker or file, as after a process restart. Needed when `persistent`. */
  openAnother?(): Promise<Transport>;
  teardown(): Promise<void>;
}

export interface TransportCapabilities {
  /** Publishing to a topic no group is bound to rejects with SURETY_PUBLISH_UNROUTABLE. */
  readonly unroutableDetection: boolean;
  /** Messages and settled positions survive closing the transport and opening another. */
  readonly persistent: boolean;
  /** `Delivery.redeliveries` counts earlier deliveries (1 on the first redelivery). */
  readonly redeliveryCount: boolean;
  /** Settlement is a committed offset: an ack never commits past an earlier unsettled message. */
  readonly checkpoint: boolean;
  /** One subscriber gets a topic's messages, on first delivery, in publish order. */
  readonly orderedPerTopic: boolean;
}

const DEFAULT_WAIT_MS = 20_000;

/** A test message: unique id, headers with non-ASCII text, a body with bytes that are not UTF-8. */
export function testMessage(label: string): WireMessage {
  return {
    id: newMessageId(),
    headers: { 'x-label': label, 'x-text': 'héllo ✓ "quoted"' },
    body: Buffer.concat([Buffer.from(JSON.stringify({ label })), Buffer.from([0x00, 0xff, 0xfe, 0x0a])]),
  };
}

type Behaviour = (delivery: Delivery, log: DeliveryLog) => Promise<void>;

/** Records deliveries and lets a test await a condition on them (event-driven, with a deadline). */
export class DeliveryLog {
  readonly deliveries: Delivery[] = [];
  private readonly waiters = new Set<() => void>();

  /** What the handler does after recording; acks by default. Tests may swap it. */
  constructor(public behaviour: Behaviour = (d) => d.ack()) {}

  readonly handler = async (delivery: Delivery): Promise<void> => {
    this.deliveries.push(delivery);
    for (const check of [...this.waiters]) check();
    await this.behaviour(delivery, this);
  };

  ids(): string[] {
    return this.deliveries.map((d) => d.message.id);
  }

  uniqueIds(): Set<string> {
    return new Set(this.ids());
  }

  countOf(id: string): number {
    return this.deliveries.filter((d) => d.message.id === id).length;
  }

  /** Resolves once `predicate` holds; rejects naming `what` after `timeoutMs`. */
  until(what: string, predicate: (log: DeliveryLog) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const check = (): void => {
        if (!predicate(this)) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what} (${this.deliveries.length} deliveries so far)`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }
}

/** Waits a while so that something that must NOT happen has had its chance to. Never a substitute for awaiting an event. */
function quietPeriod(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const hold: Behaviour = async () => {};

export function runTransportConformance(
  name: string,
  factory: () => Promise<TransportFixture>,
  capabilities: TransportCapabilities,
): void {
  describe(`transport conformance: ${name}`, () => {
    let fx: TransportFixture;
    let opened: Subscription[] = [];

    beforeEach(async () => {
      fx = await factory();
      opened = [];
    });

    afterEach(async () => {
      await Promise.allSettled(opened.map((s) => s.close()));
      await fx.teardown();
    });

    async function subscribe(
      log: DeliveryLog,
      options: SubscribeOptions,
      transport: Transport = fx.transport,
    ): Promise<Subscription> {
      const subscription = await transport.subscribe(options, log.handler);
      opened.push(subscription);
      return subscription;
    }

    async function publishAll(
      topic: string,
      messages: readonly WireMessage[],
      transport: Transport = fx.transport,
    ): Promise<void> {
      await Promise.all(messages.map((message) => transport.publish({ topic, message })));
    }

    it('publish resolves once confirmed, and the consumer gets the identical id, headers and body', async () => {
      const topic = fx.uniqueTopic('identity');
      await fx.prepareTopic(topic, 'g1');
      const sent = testMessage('identity');
      await expect(fx.transport.publish({ topic, message: sent })).resolves.toBeUndefined();

      const log = new DeliveryLog();
      await subscribe(log, { group: 'g1', topics: [topic] });
      await log.until('the message', (l) => l.deliveries.length >= 1);
      const got = log.deliveries[0]!;
      expect(got.topic).toBe(topic);
      expect(got.message.id).toBe(sent.id);
      expect(got.message.headers).toEqual(sent.headers);
      expect(Buffer.from(got.message.body).equals(sent.body)).toBe(true);
      expect(got.redeliveries).toBe(0);
    });

    it('delivers every one of 2,000 pipelined publishes', async () => {
      const topic = fx.uniqueTopic('pipelined');
      await fx.prepareTopic(topic, 'g1');
      const log = new DeliveryLog();
      await subscribe(log, { group: 'g1', topics: [topic], prefetch: 200 });
      const messages = Array.from({ length: 2_000 }, (_, i) => testMessage(`m${i}`));
      await publishAll(topic, messages);

      await log.until('2,000 distinct messages', (l) => l.uniqueIds().size >= messages.length, 60_000);
      expect(log.uniqueIds()).toEqual(new Set(messages.map((m) => m.id)));
      if (capabilities.orderedPerTopic) expect([...log.uniqueIds()]).toEqual(messages.map((m) => m.id));
    });

    it('does not redeliver acked messages to a new subscription of the same group', async () => {
      const topic = fx.uniqueTopic('acked');
      await fx.prepareTopic(topic, 'g1');
      const first = [testMessage('a'), testMessage('b'), testMessage('c')];
      await publishAll(topic, first);
      const log1 = new DeliveryLog();
      const sub1 = await subscribe(log1, { group: 'g1', topics: [topic] });
      await log1.until('three messages', (l) => l.uniqueIds().size === 3);
      await sub1.close();

      const marker = testMessage('marker');
      await publishAll(topic, [marker]);
      const log2 = new DeliveryLog();
      await subscribe(log2, { group: 'g1', topics: [topic] });
      await log2.until('the marker', (l) => l.countOf(marker.id) > 0);
      expect(log2.ids()).toEqual([marker.id]);
    });

    it('redelivers unsettled messages, with the same id, after the subscription closes', async () => {
      const topic = fx.uniqueTopic('unsettled');
      await fx.prepareTopic(topic, 'g1');
      const sent = [testMessage('a'), testMessage('b')];
      await publishAll(topic, sent);
      const log1 = new DeliveryLog(hold);
      const sub1 = await subscribe(log1, { group: 'g1', topics: [topic] });
      await log1.until('both messages', (l) => l.uniqueIds().size === 2);
      await sub1.close();

      const log2 = new DeliveryLog();
      await subscribe(log2, { group: 'g1', topics: [topic] });
      await log2.until('both messages again', (l) => l.uniqueIds().size === 2);
      expect(log2.uniqueIds()).toEqual(new Set(sent.map((m) => m.id)));
      const again = log2.deliveries.find((d) => d.message.id === sent[0]!.id)!;
      expect(Buffer.from(again.message.body).equals(sent[0]!.body)).toBe(true);
    });

    it('redelivers a message handed back with retry()', async () => {
      const topic = fx.uniqueTopic('retry');
      await fx.prepareTopic(topic, 'g1');
      const sent = testMessage('retry');
      await publishAll(topic, [sent]);
      const log = new DeliveryLog((d, l) => (l.countOf(d.message.id) === 1 ? d.retry() : d.ack()));
      await subscribe(log, { group: 'g1', topics: [topic] });

      await log.until('the redelivery', (l) => l.countOf(sent.id) >= 2);
      const [firstTry, secondTry] = log.deliveries;
      expect(secondTry!.message.id).toBe(sent.id);
      expect(Buffer.from(secondTry!.message.body).equals(sent.body)).toBe(true);
      expect(firstTry!.redeliveries).toBe(0);
      if (capabilities.redeliveryCount) expect(secondTry!.redeliveries).toBe(1);
    });

    it('keeps delivering later messages while an earlier one is being retried', async () => {
      const topic = fx.uniqueTopic('retry_flow');
      await fx.prepareTopic(topic, 'g1');
      const [stuck, next] = [testMessage('stuck'), testMessage('next')];
      await publishAll(topic, [stuck, next]);
      // `stuck` is handed back until `next` has arrived, which must not wait for `stuck`.
      const log = new DeliveryLog((d, l) =>
        d.message.id === stuck.id && l.countOf(next.id) === 0 ? d.retry() : d.ack(),
      );
      await subscribe(log, { group: 'g1', topics: [topic] });
      await log.until(
        'both messages, stuck one redelivered',
        (l) => l.countOf(next.id) >= 1 && l.countOf(stuck.id) >= 2,
      );
    });

    it('gives every group each message', async () => {
      const topic = fx.uniqueTopic('groups');
      await fx.prepareTopic(topic, 'g1');
      await fx.prepareTopic(topic, 'g2');
      const [log1, log2] = [new DeliveryLog(), new DeliveryLog()];
      await subscribe(log1, { group: 'g1', topics: [topic] });
      await subscribe(log2, { group: 'g2', topics: [topic] });
      const sent = Array.from({ length: 5 }, (_, i) => testMessage(`m${i}`));
      await publishAll(topic, sent);

      const all = new Set(sent.map((m) => m.id));
      await log1.until('group 1 to get all', (l) => l.uniqueIds().size === all.size);
      await log2.until('group 2 to get all', (l) => l.uniqueIds().size === all.size);
      expect(log1.uniqueIds()).toEqual(all);
      expect(log2.uniqueIds()).toEqual(all);
    });

    it('hands out at most `prefetch` unsettled deliveries', async () => {
      const topic = fx.uniqueTopic('prefetch');
      await fx.prepareTopic(topic, 'g1');
      await publishAll(
        topic,
        Array.from({ length: 12 }, (_, i) => testMessage(`m${i}`)),
      );
      const log = new DeliveryLog(hold);
      await subscribe(log, { group: 'g1', topics: [topic], prefetch: 4 });
      await log.until('four deliveries', (l) => l.deliveries.length >= 4);
      await quietPeriod(300);
      expect(log.deliveries).toHaveLength(4);

      log.behaviour = (d) => d.ack();
      await Promise.all(log.deliveries.map((d) => d.ack()));
      await log.until('the other eight', (l) => l.uniqueIds().size === 12);
    });

    it('close() waits for in-flight handlers and is idempotent', async () => {
      const topic = fx.uniqueTopic('close_wait');
      await fx.prepareTopic(topic, 'g1');
      await publishAll(topic, [testMessage('slow')]);
      const events: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const log = new DeliveryLog(async (d) => {
        await gate;
        await d.ack();
        events.push('handler done');
      });
      const subscription = await subscribe(log, { group: 'g1', topics: [topic] });
      await log.until('the slow message', (l) => l.deliveries.length === 1);

      const closed = subscription.close().then(() => events.push('closed'));
      await new Promise((resolve) => setImmediate(resolve));
      events.push('released');
      release();
      await closed;
      await subscription.close();
      expect(events).toEqual(['released', 'handler done', 'closed']);
    });

    it('rejects a publish after close() with SURETY_TRANSPORT_CLOSED', async () => {
      const topic = fx.uniqueTopic('closed');
      await fx.prepareTopic(topic, 'g1');
      await fx.transport.close();
      await fx.transport.close();
      expect(fx.transport.isReady()).toBe(false);
      const attempt = fx.transport.publish({ topic, message: testMessage('late') });
      await expect(attempt).rejects.toBeInstanceOf(PublishError);
      await expect(attempt).rejects.toMatchObject({ code: 'SURETY_TRANSPORT_CLOSED' });
    });

    it.runIf(capabilities.unroutableDetection)(
      'rejects a publish nobody can receive with SURETY_PUBLISH_UNROUTABLE',
      async () => {
        const topic = fx.uniqueTopic('unroutable');
        const attempt = fx.transport.publish({ topic, message: testMessage('lost') });
        await expect(attempt).rejects.toMatchObject({ code: 'SURETY_PUBLISH_UNROUTABLE' });
      },
    );

    it.runIf(capabilities.checkpoint)('does not commit an ack past an earlier unsettled message', async () => {
      const topic = fx.uniqueTopic('checkpoint');
      await fx.prepareTopic(topic, 'g1');
      const [early, late] = [testMessage('early'), testMessage('late')];
      await publishAll(topic, [early, late]);
      const log1 = new DeliveryLog((d) => (d.message.id === late.id ? d.ack() : Promise.resolve()));
      const sub1 = await subscribe(log1, { group: 'g1', topics: [topic] });
      await log1.until('both messages', (l) => l.uniqueIds().size === 2);
      await sub1.close();

      const log2 = new DeliveryLog();
      await subscribe(log2, { group: 'g1', topics: [topic] });
      await log2.until('both messages again', (l) => l.uniqueIds().size === 2);
      expect(log2.ids()).toEqual([early.id, late.id]);
    });

    it.runIf(!capabilities.checkpoint)(
      'settles each ack on its own, earlier unsettled messages notwithstanding',
      async () => {
        const topic = fx.uniqueTopic('individual_ack');
        await fx.prepareTopic(topic, 'g1');
        const [early, late] = [testMessage('early'), testMessage('late')];
        await publishAll(topic, [early, late]);
        const log1 = new DeliveryLog((d) => (d.message.id === late.id ? d.ack() : Promise.resolve()));
        const sub1 = await subscribe(log1, { group: 'g1', topics: [topic] });
        await log1.until('both messages', (l) => l.uniqueIds().size === 2);
        await sub1.close();

        const marker = testMessage('marker');
        await publishAll(topic, [marker]);
        const log2 = new DeliveryLog();
        await subscribe(log2, { group: 'g1', topics: [topic] });
        await log2.until(
          'the early message and the marker',
          (l) => l.countOf(early.id) > 0 && l.countOf(marker.id) > 0,
        );
        expect(log2.countOf(late.id)).toBe(0);
      },
    );

    it.runIf(capabilities.persistent)('keeps messages and settled positions across a transport restart', async () => {
      if (!fx.openAnother) throw new Error('a persistent transport fixture must provide openAnother()');
      const topic = fx.uniqueTopic('restart');
      await fx.prepareTopic(topic, 'g1');
      const [done, pending] = [testMessage('done'), testMessage('pending')];
      await publishAll(topic, [done]);
      const log1 = new DeliveryLog();
      const sub1 = await subscribe(log1, { group: 'g1', topics: [topic] });
      await log1.until('the first message', (l) => l.deliveries.length === 1);
      await sub1.close();
      await publishAll(topic, [pending]);
      await fx.transport.close();

      const restarted = await fx.openAnother();
      const log2 = new DeliveryLog();
      await subscribe(log2, { group: 'g1', topics: [topic] }, restarted);
      await log2.until('the message published before the restart', (l) => l.countOf(pending.id) > 0);
      expect(log2.ids()).toEqual([pending.id]);
    });
  });
}
