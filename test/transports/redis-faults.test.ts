import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { waitFor } from '../support/wait.js';
import { killClients } from './fixtures/redis-admin.js';
import { useRedisTestbed } from './fixtures/redis-testbed.js';

describe('redis connections cut from the server (CLIENT KILL)', () => {
  const bed = useRedisTestbed('faults', { reconnect: { initialMs: 20, maxMs: 200 } });

  /** The `id` field of every entry of `stream`. */
  const idsIn = async (stream: string): Promise<Set<string>> => {
    const entries = await bed.admin.xrange(stream, '-', '+');
    return new Set(entries.map(([, fields]) => fields[fields.indexOf('id') + 1]!));
  };

  it('fails the publishes in flight with SURETY_CONNECTION_LOST; every one that resolved is in the stream; then publishes again', async () => {
    const transport = await bed.open();
    const outcomes: Promise<{ id: string; error?: unknown }>[] = [];
    let killed = false;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 250; i++) {
        const message = testMessage(`r${round}m${i}`);
        outcomes.push(
          transport.publish({ topic: 't', message }).then(
            () => ({ id: message.id }),
            (error: unknown) => ({ id: message.id, error }),
          ),
        );
      }
      if (round === 5) {
        await outcomes[0]; // the first batches are answered, later ones on the wire or queued
        expect(await killClients(bed.admin, bed.prefix)).toBeGreaterThan(0);
        killed = true;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(killed).toBe(true);
    const settled = await Promise.all(outcomes);
    const failed = settled.filter((o) => o.error);
    const resolved = settled.filter((o) => !o.error);
    expect(failed.length).toBeGreaterThan(0);
    expect(resolved.length).toBeGreaterThan(0);
    for (const { error } of failed) {
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).code).toBe('SURETY_CONNECTION_LOST');
    }
    const inStream = await idsIn(`${bed.prefix}t`);
    expect(resolved.filter((o) => !inStream.has(o.id))).toEqual([]);

    expect(await transport.waitUntilReady(10_000)).toBe(true);
    const after = testMessage('after');
    await transport.publish({ topic: 't', message: after });
    expect((await idsIn(`${bed.prefix}t`)).has(after.id)).toBe(true);
  });

  it('resumes the subscription from its own pending list: what it held unsettled, and entries whose reply the cut swallowed', async () => {
    const consumerName = 'steady';
    // claimIdleMs far beyond the test: only re-reading its own pending list can deliver them.
    const transport = await bed.open({ consumerName, claimIdleMs: 600_000 });
    const stream = `${bed.prefix}t`;
    // `before` is held: with prefetch 1 the subscription reads nothing more until it is acked.
    const log = new DeliveryLog(async () => {});
    await transport.subscribe({ group: 'g', topics: ['t'], prefetch: 1 }, log.handler);
    const before = testMessage('before');
    await transport.publish({ topic: 't', message: before });
    await log.until('the first message', (l) => l.countOf(before.id) === 1);

    // An entry read for this consumer whose reply never reached it, as when a connection drops.
    const swallowed = testMessage('swallowed');
    await bed.admin.xadd(stream, '*', 'id', swallowed.id, 'h', JSON.stringify(swallowed.headers), 'b', swallowed.body);
    await bed.admin.xreadgroup('GROUP', 'g', consumerName, 'COUNT', 1, 'STREAMS', stream, '>');

    log.behaviour = (d) => d.ack();
    expect(await killClients(bed.admin, bed.prefix)).toBe(2); // the command connection and the subscription's
    // As a broker requeues what a lost connection left unsettled, the held entry comes again too.
    await log.until(
      'the held entry again and the swallowed one, from the pending list',
      (l) => l.countOf(before.id) === 2 && l.countOf(swallowed.id) === 1,
    );
    expect(log.deliveries.filter((d) => d.message.id === before.id)[1]!.redeliveries).toBeGreaterThanOrEqual(1);
    await log.deliveries[0]!.ack(); // the voided first delivery's late ack is harmless
    expect(await transport.waitUntilReady(10_000)).toBe(true);
    const after = testMessage('after');
    await transport.publish({ topic: 't', message: after });
    await log.until('a message published after the cut', (l) => l.countOf(after.id) === 1);
    expect(log.countOf(before.id)).toBe(2);
    await waitFor('every entry acked', async () => ((await bed.admin.xpending(stream, 'g')) as [number])[0] === 0);
  });
});
