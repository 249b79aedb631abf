import { describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../src/core/wire.js';
import { PoisonMessageError } from '../../src/core/errors.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { waitFor } from '../support/wait.js';
import { useRedisTestbed } from './fixtures/redis-testbed.js';
import { effectsConsumer } from './fixtures/redis-consumer-app.js';
import { envelopes } from './fixtures/redis-envelopes.js';

describe('redis deliveries', () => {
  const bed = useRedisTestbed('delivery');

  it('count Redis deliveries: redeliveries is the count minus one, and past maxDeliveries the delivery is exhausted', async () => {
    const transport = await bed.open({ maxDeliveries: 2, retryDelayMs: 20 });
    const sent = testMessage('crash-loop');
    await transport.publish({ topic: 't', message: sent });
    const log = new DeliveryLog((d) => (d.exhausted ? d.ack() : d.retry()));
    await transport.subscribe({ group: 'g', topics: ['t'] }, log.handler);
    await log.until('the exhausted delivery', (l) => l.deliveries.some((d) => d.exhausted));
    expect(log.deliveries.map((d) => d.redeliveries)).toEqual([0, 1, 2]);
    expect(log.deliveries.map((d) => d.exhausted)).toEqual([
      undefined,
      undefined,
      { reason: 'max_deliveries', deliveries: 2 },
    ]);
    await waitFor('the ack', async () => ((await bed.admin.xpending(`${bed.prefix}t`, 'g')) as [number])[0] === 0);
  });

  it('hand an entry past maxDeliveries to the consumer, which records it as a dead letter without running the handler', async () => {
    const stream = `${bed.prefix}t`;
    await bed.admin.xgroup('CREATE', stream, 'billing', '0', 'MKSTREAM');
    const transport = await bed.open({ maxDeliveries: 3, claimIdleMs: 200 });
    const [poisonous] = envelopes('t', 1);
    await transport.publish({ topic: 't', message: poisonous! });
    // A crash loop as Redis sees it: delivered to consumers that never settled it, four times.
    await bed.admin.xreadgroup('GROUP', 'billing', 'crashed', 'COUNT', 1, 'STREAMS', stream, '>');
    const entryId = (await bed.admin.xrange(stream, '-', '+'))[0]![0];
    for (let i = 0; i < 3; i++) await bed.admin.xclaim(stream, 'billing', 'crashed', 0, entryId);
    const app = await effectsConsumer(transport, 'billing', 't');
    try {
      await app.consumer.start();
      await waitFor('the dead letter', async () => (await app.deadLetters()).length === 1, 20_000);
      const [dead] = await app.deadLetters();
      expect(dead!.message_id).toBe(poisonous!.id);
      expect(dead!.last_error).toContain('max_deliveries');
      expect(await app.effects()).toEqual([]);
      await waitFor('the ack', async () => ((await bed.admin.xpending(stream, 'billing')) as [number])[0] === 0);
    } finally {
      await app.close();
    }
  });

  it('deliver entries that are not Surety messages instead of dropping them; the consumer dead-letters them and goes on', async () => {
    const stream = `${bed.prefix}t`;
    await bed.admin.xgroup('CREATE', stream, 'billing', '0', 'MKSTREAM');
    const [good] = envelopes('t', 1);
    await bed.admin.xadd(stream, '*', 'something', 'else');
    await bed.admin.xadd(stream, '*', 'id', good!.id.replace(/.$/, '0'), 'h', '{not json', 'b', '{}');
    await bed.admin.xadd(stream, '*', 'id', 'x', 'h', '{"a":1}');
    const transport = await bed.open();
    await transport.publish({ topic: 't', message: good! });

    const log = new DeliveryLog();
    const probe = await bed.open({ consumerName: 'reader' });
    const subscription = await probe.subscribe({ group: 'inspect', topics: ['t'] }, log.handler);
    await log.until('all four entries', (l) => l.deliveries.length === 4);
    await subscription.close();
    const [missing, badHeaders, noBody] = log.deliveries.map((d) => d.message);
    expect(missing!.id).toMatch(new RegExp(`^${stream}/\\d+-\\d+$`));
    expect(missing!.headers['surety-redis-poison']).toContain('field "id" is missing');
    expect(missing!.headers['surety-redis-field-something']).toBe('else');
    expect(badHeaders!.headers['surety-redis-poison']).toContain(
      'field "h" is missing or not a JSON object of strings',
    );
    expect(noBody!.headers['surety-redis-poison']).toContain('field "b" is missing');
    for (const m of [missing, badHeaders, noBody]) expect(() => decodeEnvelope(m!)).toThrow(PoisonMessageError);

    const app = await effectsConsumer(transport, 'billing', 't');
    try {
      await app.consumer.start();
      await waitFor('three dead letters and one effect', async () => {
        return (await app.deadLetters()).length === 3 && (await app.effects()).length === 1;
      });
      expect((await app.deadLetters()).map((d) => d.poison)).toEqual([1, 1, 1]);
      expect(JSON.parse((await app.deadLetters())[0]!.headers)['surety-redis-poison']).toContain('is missing');
      await waitFor(
        'every entry acked',
        async () => ((await bed.admin.xpending(stream, 'billing')) as [number])[0] === 0,
      );
    } finally {
      await app.close();
    }
  });

  it('keep an entry whose handler is slower than claimIdleMs: no other consumer claims it while it works', async () => {
    // b looks for idle entries far more often than a: only a's idle reset keeps the entry from it.
    const a = await bed.open({ claimIdleMs: 300, claimIntervalMs: 100, consumerName: 'a' });
    const b = await bed.open({ claimIdleMs: 300, claimIntervalMs: 20, consumerName: 'b' });
    const sent = testMessage('slow');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = new DeliveryLog(async (d) => {
      await gate;
      await d.ack();
    });
    await a.subscribe({ group: 'g', topics: ['t'] }, slow.handler);
    await a.publish({ topic: 't', message: sent });
    await slow.until('the slow message', (l) => l.deliveries.length === 1);
    const other = new DeliveryLog();
    await b.subscribe({ group: 'g', topics: ['t'] }, other.handler);
    // Five times claimIdleMs: without the idle reset, b would have claimed it.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // Still a's, delivered once: resetting the idle time (XCLAIM JUSTID) counts no delivery.
    const [entry] = (await bed.admin.xpending(`${bed.prefix}t`, 'g', '-', '+', 10)) as [
      string,
      string,
      number,
      number,
    ][];
    expect([entry![1], entry![3]]).toEqual(['a', 1]);
    release();
    await waitFor('the ack', async () => ((await bed.admin.xpending(`${bed.prefix}t`, 'g')) as [number])[0] === 0);
    expect(other.deliveries).toHaveLength(0);
    expect(slow.deliveries).toHaveLength(1);
  });

  it('start a new group at the end of the stream with groupStart "$"', async () => {
    const transport = await bed.open({ groupStart: '$' });
    const before = testMessage('before');
    await transport.publish({ topic: 't', message: before });
    const log = new DeliveryLog();
    await transport.subscribe({ group: 'late', topics: ['t'] }, log.handler);
    const after = testMessage('after');
    await transport.publish({ topic: 't', message: after });
    await log.until('the message after', (l) => l.countOf(after.id) === 1);
    expect(log.ids()).toEqual([after.id]);
  });
});
