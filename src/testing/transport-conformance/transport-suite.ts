import assert from 'node:assert/strict';
import { PublishError } from '../../core/errors.js';
import type { WireMessage } from '../../core/wire.js';
import type { Delivery, SubscribeOptions, Subscription, Transport } from '../../ports/transport.js';
import { DeliveryLog, hold } from './delivery-log.js';
import type { TransportCapabilities, TransportFixture } from './fixture.js';
import { resolveRunner, type TestRunner } from './runner.js';
import { testMessage } from './test-message.js';

/** Waits so that something that must NOT happen has had its chance to. Never a substitute for awaiting an event. */
function quietPeriod(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function sameBody(got: Delivery, sent: WireMessage): void {
  assert.ok(Buffer.from(got.message.body).equals(sent.body), `body of ${sent.id} changed on the way`);
}

/**
 * The behaviour every broker adapter must show (like Watermill's universal pub/sub tests), for an
 * adapter written in this repository or outside it. The factory runs before every test and must
 * give an isolated transport; topics come from `uniqueTopic`, and a topic is published to only
 * after `prepareTopic(topic, group)` for every group that will read it.
 * @example
 * import { afterEach, beforeEach, describe, it } from 'vitest';
 * import { runTransportConformance } from 'surety/testing';
 *
 * runTransportConformance('my-broker', async () => ({ transport, uniqueTopic, prepareTopic, teardown }),
 *   { unroutableDetection: false, persistent: true, redeliveryCount: true, checkpoint: false, orderedPerTopic: true },
 *   { describe, it, beforeEach, afterEach });
 */
export function runTransportConformance(
  name: string,
  factory: () => Promise<TransportFixture>,
  capabilities: TransportCapabilities,
  runner?: TestRunner,
): void {
  const { describe, it, beforeEach, afterEach } = resolveRunner(runner);
  const orderedPerKey = capabilities.orderedPerKey ?? capabilities.orderedPerTopic;

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

    /** Publishes two messages, acks only the later one, and closes that subscription. */
    async function ackOnlyTheLater(topic: string): Promise<[WireMessage, WireMessage]> {
      await fx.prepareTopic(topic, 'g1');
      const [early, late] = [testMessage('early'), testMessage('late')];
      await publishAll(topic, [early, late]);
      const log = new DeliveryLog((d) => (d.message.id === late.id ? d.ack() : Promise.resolve()));
      const subscription = await subscribe(log, { group: 'g1', topics: [topic] });
      await log.until('both messages', (l) => l.uniqueIds().size === 2);
      await subscription.close();
      return [early, late];
    }

    it('publish resolves once confirmed, and the consumer gets the identical id, headers and body', async () => {
      const topic = fx.uniqueTopic('identity');
      await fx.prepareTopic(topic, 'g1');
      const sent = testMessage('identity');
      assert.equal(await fx.transport.publish({ topic, message: sent }), undefined);

      const log = new DeliveryLog();
      await subscribe(log, { group: 'g1', topics: [topic] });
      await log.until('the message', (l) => l.deliveries.length >= 1);
      const got = log.deliveries[0]!;
      assert.equal(got.topic, topic);
      assert.equal(got.message.id, sent.id);
      assert.deepEqual({ ...got.message.headers }, { ...sent.headers });
      sameBody(got, sent);
      assert.equal(got.redeliveries, 0);
    });

    it('delivers every one of 2,000 pipelined publishes', async () => {
      const topic = fx.uniqueTopic('pipelined');
      await fx.prepareTopic(topic, 'g1');
      const log = new DeliveryLog();
      await subscribe(log, { group: 'g1', topics: [topic], prefetch: 200 });
      const messages = Array.from({ length: 2_000 }, (_, i) => testMessage(`m${i}`));
      await publishAll(topic, messages);

      await log.until('2,000 distinct messages', (l) => l.uniqueIds().size >= messages.length, 60_000);
      assert.deepEqual(log.uniqueIds(), new Set(messages.map((m) => m.id)));
      if (capabilities.orderedPerTopic)
        assert.deepEqual(
          [...log.uniqueIds()],
          messages.map((m) => m.id),
        );
    });

    if (orderedPerKey)
      it('keeps each ordering key in publish order', async () => {
        const topic = fx.uniqueTopic('per_key');
        await fx.prepareTopic(topic, 'g1');
        const keys = ['k0', 'k1', 'k2', 'k3'];
        const messages = Array.from({ length: 400 }, (_, i) => testMessage(`m${i}`, keys[i % keys.length]));
        const log = new DeliveryLog();
        await subscribe(log, { group: 'g1', topics: [topic], prefetch: 50 });
        await publishAll(topic, messages);

        await log.until('400 distinct messages', (l) => l.uniqueIds().size >= messages.length, 60_000);
        const keyOf = new Map(messages.map((m) => [m.id, m.headers['surety-ordering-key']]));
        for (const key of keys) {
          const sent = messages.filter((m) => keyOf.get(m.id) === key).map((m) => m.id);
          const got = [...log.uniqueIds()].filter((id) => keyOf.get(id) === key);
          assert.deepEqual(got, sent, `key ${key} out of order`);
        }
      });

    it('does not redeliver acked messages to a new subscription of the same group', async () => {
      const topic = fx.uniqueTopic('acked');
      await fx.prepareTopic(topic, 'g1');
      await publishAll(topic, [testMessage('a'), testMessage('b'), testMessage('c')]);
      const log1 = new DeliveryLog();
      const sub1 = await subscribe(log1, { group: 'g1', topics: [topic] });
      await log1.until('three messages', (l) => l.uniqueIds().size === 3);
      await sub1.close();

      const marker = testMessage('marker');
      await publishAll(topic, [marker]);
      const log2 = new DeliveryLog();
      await subscribe(log2, { group: 'g1', topics: [topic] });
      await log2.until('the marker', (l) => l.countOf(marker.id) > 0);
      assert.deepEqual(log2.ids(), [marker.id]);
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
      assert.deepEqual(log2.uniqueIds(), new Set(sent.map((m) => m.id)));
      sameBody(
        log2.deliveries.find((d) => d.message.id === sent[0]!.id)!,
        sent[0]!,
      );
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
      assert.equal(secondTry!.message.id, sent.id);
      sameBody(secondTry!, sent);
      assert.equal(firstTry!.redeliveries, 0);
      if (capabilities.redeliveryCount) assert.equal(secondTry!.redeliveries, 1);
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
      assert.deepEqual(log1.uniqueIds(), all);
      assert.deepEqual(log2.uniqueIds(), all);
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
      assert.equal(log.deliveries.length, 4);

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
      assert.deepEqual(events, ['released', 'handler done', 'closed']);
    });

    it('rejects a publish after close() with SURETY_TRANSPORT_CLOSED', async () => {
      const topic = fx.uniqueTopic('closed');
      await fx.prepareTopic(topic, 'g1');
      await fx.transport.close();
      await fx.transport.close();
      assert.equal(fx.transport.isReady(), false);
      await assert.rejects(fx.transport.publish({ topic, message: testMessage('late') }), (err: unknown) => {
        assert.ok(err instanceof PublishError, `expected a PublishError, got ${String(err)}`);
        assert.equal(err.code, 'SURETY_TRANSPORT_CLOSED');
        return true;
      });
    });

    if (capabilities.unroutableDetection)
      it('rejects a publish nobody can receive with SURETY_PUBLISH_UNROUTABLE', async () => {
        const topic = fx.uniqueTopic('unroutable');
        await assert.rejects(fx.transport.publish({ topic, message: testMessage('lost') }), {
          code: 'SURETY_PUBLISH_UNROUTABLE',
        });
      });

    if (capabilities.checkpoint)
      it('does not commit an ack past an earlier unsettled message', async () => {
        const topic = fx.uniqueTopic('checkpoint');
        const [early, late] = await ackOnlyTheLater(topic);

        const log2 = new DeliveryLog();
        await subscribe(log2, { group: 'g1', topics: [topic] });
        await log2.until('both messages again', (l) => l.uniqueIds().size === 2);
        assert.deepEqual(log2.ids(), [early.id, late.id]);
      });
    else
      it('settles each ack on its own, earlier unsettled messages notwithstanding', async () => {
        const topic = fx.uniqueTopic('individual_ack');
        const [early, late] = await ackOnlyTheLater(topic);

        const marker = testMessage('marker');
        await publishAll(topic, [marker]);
        const log2 = new DeliveryLog();
        await subscribe(log2, { group: 'g1', topics: [topic] });
        await log2.until(
          'the early message and the marker',
          (l) => l.countOf(early.id) > 0 && l.countOf(marker.id) > 0,
        );
        assert.equal(log2.countOf(late.id), 0);
      });

    if (capabilities.persistent)
      it('keeps messages and settled positions across a transport restart', async () => {
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
        assert.deepEqual(log2.ids(), [pending.id]);
      });

    if (capabilities.connectionCut)
      it('redelivers, with the same id, what was unsettled when the connection was cut', async () => {
        if (!fx.cutConnections || !fx.openAnother)
          throw new Error('connectionCut needs cutConnections() and openAnother()');
        const topic = fx.uniqueTopic('cut');
        await fx.prepareTopic(topic, 'g1');
        const sent = [testMessage('a'), testMessage('b')];
        await publishAll(topic, sent);
        // Held unsettled, then cut: neither ack nor close reaches the broker, as when a process dies.
        const log = new DeliveryLog(hold);
        await subscribe(log, { group: 'g1', topics: [topic] });
        await log.until('both messages', (l) => l.uniqueIds().size === 2);
        log.behaviour = (d) => d.ack();
        await fx.cutConnections();

        // Whether the cut transport reconnects or the new one takes over, both come again.
        await subscribe(log, { group: 'g1', topics: [topic] }, await fx.openAnother());
        await log.until('both messages again', (l) => sent.every((m) => l.countOf(m.id) >= 2), 60_000);
        const again = log.deliveries.filter((d) => d.message.id === sent[0]!.id)[1]!;
        sameBody(again, sent[0]!);
        if (capabilities.redeliveryCount) assert.ok(again.redeliveries >= 1, 'a redelivery must say it is one');
      });
  });
}
