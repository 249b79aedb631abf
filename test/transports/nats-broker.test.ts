import { afterEach, expect, it } from 'vitest';
import type { Transport } from '../../src/ports/transport.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import nats from '../support/brokers/nats.js';
import { uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const ns = uniqueName('but');
let transport: Transport | undefined;

afterEach(async () => {
  await transport?.close();
  await nats.cleanup(ns);
});

it('opens, prepares, cuts its connections from the broker side, and works again after the reconnect', async () => {
  transport = await nats.open(ns);
  await nats.prepare(ns, 'order.created', 'billing');
  const log = new DeliveryLog();
  await transport.subscribe({ group: 'billing', topics: ['order.created'] }, log.handler);
  const before = testMessage('before');
  await transport.publish({ topic: 'order.created', message: before });
  await log.until('the first message', (l) => l.countOf(before.id) === 1);

  const t = transport;
  let lost = false;
  const watching = waitFor('the cut to be noticed', () => (lost ||= !t.isReady()), 10_000, 1);
  await nats.cutConnections(ns);
  await watching;
  expect(await t.waitUntilReady(10_000)).toBe(true);

  const after = testMessage('after');
  await t.publish({ topic: 'order.created', message: after });
  await log.until('the message after the cut', (l) => l.countOf(after.id) === 1);
  expect(log.ids()).toEqual([before.id, after.id]);
});
