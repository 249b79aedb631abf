/**
 * Connections cut from the broker's side (ss -K on the broker's end of each socket): the transport
 * reconnects by itself, publishes again, and a member that kept its session settles and commits
 * what it held. Also the BrokerUnderTest the chaos test drives.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Delivery, Transport } from '../../src/ports/transport.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import kafka from '../support/brokers/kafka.js';
import { uniqueName } from '../support/env.js';
import { kafkaClientPorts } from '../support/kafka-connections.js';
import { createKafkaQueueProbe } from '../../src/transports/kafka/index.js';
import { testEnv } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const TOPIC = 'faults.item';

describe('kafka: connections cut from the broker side', () => {
  let ns: string;
  const opened: Transport[] = [];

  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((t) => t.close()));
    await kafka.cleanup(ns);
  });

  async function open(): Promise<Transport> {
    const transport = await kafka.open(ns);
    opened.push(transport);
    return transport;
  }

  it('BrokerUnderTest: open, prepare, publish, cut, and publish again once the transport has reconnected', async () => {
    ns = uniqueName('kafka_but');
    await kafka.prepare(ns, TOPIC, 'g');
    const transport = await open();
    const log = new DeliveryLog();
    await transport.subscribe({ group: 'g', topics: [TOPIC] }, log.handler);
    const before = testMessage('before');
    await transport.publish({ topic: TOPIC, message: before });
    await log.until('the first message', (l) => l.countOf(before.id) === 1);

    const cut = await kafkaClientPorts({ ns, self: true });
    expect(cut.length).toBeGreaterThan(0);
    await kafka.cutConnections(ns);
    const left = await kafkaClientPorts({ ns, self: true });
    expect(left.filter((p) => cut.includes(p))).toEqual([]);

    expect(await transport.waitUntilReady(30_000)).toBe(true);
    const after = testMessage('after');
    await transport.publish({ topic: TOPIC, message: after });
    await log.until('the message published after the cut', (l) => l.countOf(after.id) === 1, 30_000);
    expect(log.countOf(before.id)).toBe(1);
  });

  it('a member that keeps its session through a cut acks what it held, and the commit goes through', async () => {
    ns = uniqueName('kafka_cut');
    await kafka.prepare(ns, TOPIC, 'g');
    const transport = await open();
    const sent = Array.from({ length: 6 }, (_, i) => testMessage(`m${i}`));
    await Promise.all(sent.map((message) => transport.publish({ topic: TOPIC, message })));
    const held: Delivery[] = [];
    const log = new DeliveryLog(async (d) => {
      held.push(d);
    });
    await transport.subscribe({ group: 'g', topics: [TOPIC] }, log.handler);
    await log.until('all six, held unsettled', (l) => l.uniqueIds().size === 6);

    await kafka.cutConnections(ns);
    await Promise.all(held.map((d) => d.ack()));

    const probe = await createKafkaQueueProbe({ brokers: testEnv.kafkaBrokers });
    try {
      await waitFor(
        'the offsets committed after the cut',
        async () => (await probe.inspect(`${ns}.${TOPIC}@${ns}.g`)).ready === 0,
        30_000,
        200,
      );
    } finally {
      await probe.close();
    }
    expect(log.deliveries.length).toBe(6);
  });
});
