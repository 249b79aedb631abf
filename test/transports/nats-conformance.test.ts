import { createNatsTransport, type NatsTransport } from '../../src/transports/nats/index.js';
import { runTransportConformance } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { NatsAdmin } from './fixtures/nats-admin.js';
import { NatsProxy } from './fixtures/nats-proxy.js';

runTransportConformance(
  'nats',
  async () => {
    // One stream per topic (named after it); groups ('g1', 'g2') are durable consumers on it.
    // Through a proxy of the fixture's own, which can drop every connection as a network fault does.
    const proxy = await NatsProxy.start(testEnv.natsUrl);
    const opened: NatsTransport[] = [];
    const open = async (): Promise<NatsTransport> => {
      // ack_wait short enough that what a cut connection held comes back within the test.
      const transport = await createNatsTransport({ url: proxy.url, logger: null, ackWaitMs: 3_000 });
      opened.push(transport);
      if (!(await transport.waitUntilReady(10_000))) throw new Error('NATS transport not ready');
      return transport;
    };
    const admin = await NatsAdmin.open();
    const prepared = new Set<string>();
    return {
      transport: await open(),
      uniqueTopic: (label) => uniqueName(label),
      prepareTopic: async (topic) => {
        if (prepared.has(topic)) return;
        prepared.add(topic);
        await admin.stream(topic);
      },
      openAnother: open,
      cutConnections: async () => proxy.cutAll(),
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        await proxy.close();
        await admin.close();
      },
    };
  },
  {
    unroutableDetection: true,
    persistent: true,
    redeliveryCount: true,
    checkpoint: false,
    orderedPerTopic: true,
    connectionCut: true,
  },
);
