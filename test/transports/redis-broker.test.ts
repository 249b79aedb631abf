import { afterEach, describe, expect, it } from 'vitest';
import type { Transport } from '../../src/ports/transport.js';
import redis from '../support/brokers/redis.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { uniqueName } from '../support/env.js';

describe('redis as a BrokerUnderTest', () => {
  const ns = uniqueName('broker');
  const opened: Transport[] = [];

  afterEach(async () => {
    await Promise.all(opened.map((t) => t.close()));
    await redis.cleanup(ns);
  });

  it('opens an isolated transport, prepares a topic, and rides through connections cut from the server', async () => {
    const transport = await redis.open(ns);
    opened.push(transport);
    await redis.prepare(ns, 'order.created', 'billing');
    await redis.prepare(ns, 'order.created', 'billing'); // idempotent
    const first = testMessage('first');
    await transport.publish({ topic: 'order.created', message: first });

    const log = new DeliveryLog();
    await transport.subscribe({ group: 'billing', topics: ['order.created'] }, log.handler);
    await log.until('the first message', (l) => l.countOf(first.id) === 1);

    await redis.cutConnections(ns);
    expect(await transport.waitUntilReady(10_000)).toBe(true);
    const second = testMessage('second');
    await transport.publish({ topic: 'order.created', message: second });
    await log.until('the second message', (l) => l.countOf(second.id) === 1);
    expect(log.ids()).toEqual([first.id, second.id]);
  });
});
