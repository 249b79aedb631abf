import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BrokerProbe } from '../../src/ports/broker-probe.js';
import { createNatsQueueProbe, createNatsTransport, type NatsTransport } from '../../src/transports/nats/index.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { NatsAdmin } from './fixtures/nats-admin.js';

describe('the NATS queue probe (a stream and its durable consumer)', () => {
  let admin: NatsAdmin;
  let topic: string;
  let transport: NatsTransport;
  let probe: BrokerProbe;

  beforeEach(async () => {
    admin = await NatsAdmin.open();
    topic = uniqueName('probe');
    await admin.stream(topic, [topic], { duplicateWindowMs: 30_000 });
    transport = await createNatsTransport({ url: testEnv.natsUrl, logger: null, ackWaitMs: 5_000, maxDeliver: 4 });
    await transport.waitUntilReady(10_000);
    probe = createNatsQueueProbe({ url: testEnv.natsUrl });
  });
  afterEach(async () => {
    await probe.close();
    await transport.close();
    await admin.close();
  });

  it('reports pending, unacknowledged and redelivered counts and the settings the doctor checks', async () => {
    const [held, retried, ...rest] = Array.from({ length: 6 }, (_, i) => testMessage(`m${i}`));
    // Two handed out at a time: one held, one handed back and then held, the other four still pending.
    const log = new DeliveryLog((d, l) =>
      d.message.id === retried!.id && l.countOf(retried!.id) === 1 ? d.retry() : Promise.resolve(),
    );
    await transport.subscribe({ group: 'billing', topics: [topic], prefetch: 2 }, log.handler);
    await Promise.all([held!, retried!, ...rest].map((message) => transport.publish({ topic, message })));
    await log.until('the retried one back', (l) => l.countOf(retried!.id) === 2);

    const name = `${topic}.billing`;
    await waitFor('the figures to settle', async () => (await probe.inspect(name)).unacked === 2);
    const state = await probe.inspect(name);
    expect(state).toMatchObject({
      name,
      exists: true,
      ready: 4,
      unacked: 2,
      durable: true,
      type: 'jetstream',
      deliveryLimit: 4,
      source: 'jetstream',
    });
    expect(state.consumers).toBeGreaterThanOrEqual(1); // the subscription's waiting pull
    expect(state.arguments).toMatchObject({
      num_redelivered: 1,
      num_replicas: 1,
      storage: 'file',
      ack_policy: 'explicit',
      ack_wait_ms: 5_000,
      max_deliver: 4,
      duplicate_window_ms: 30_000,
    });
    expect(await probe.listQueues!()).toContain(name);
  });

  it('says a stream or consumer does not exist, and rejects a name that is not <stream>.<consumer>', async () => {
    expect(await probe.inspect(`${topic}.nobody`)).toMatchObject({ exists: false, ready: 0, consumers: 0 });
    expect(await probe.inspect(`${uniqueName('none')}.billing`)).toMatchObject({ exists: false });
    await expect(probe.inspect(topic)).rejects.toMatchObject({ code: 'SURETY_INVALID_OPTION' });
    expect(probe).toMatchObject({ broker: 'nats', address: 'nats://127.0.0.1:4222' });
  });

  it('rejects when the server cannot be reached', async () => {
    const away = createNatsQueueProbe({ url: 'nats://127.0.0.1:1', timeoutMs: 500 });
    await expect(away.inspect(`${topic}.billing`)).rejects.toThrow();
    await away.close();
  });
});
