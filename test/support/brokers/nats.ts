import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Transport } from '../../../src/ports/transport.js';
import { createNatsTransport, declareTopology } from '../../../src/transports/nats/index.js';
import { NatsProxy } from '../../transports/fixtures/nats-proxy.js';
import { testEnv } from '../env.js';
import type { BrokerUnderTest } from './broker-under-test.js';

/*
 * NATS 2.9 cannot kick a client from the server without a system account, so every transport of a
 * namespace connects through a loopback proxy in its own process, and that proxy resets its
 * connections when told to on `surety-test.cut.<ns>` (over a direct connection): whichever process
 * the relay or consumer runs in, the cut reaches it. A namespace is one stream, `<ns>`, storing
 * `<ns>.>`; topics are subjects under it.
 */

const cutSubject = (ns: string): string => `surety-test.cut.${ns}`;

async function admin<T>(work: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: testEnv.natsUrl, name: 'surety-test-broker' });
  try {
    return await work(nc);
  } finally {
    await nc.close();
  }
}

const nats: BrokerUnderTest = {
  name: 'nats',

  async open(ns) {
    const proxy = await NatsProxy.start(testEnv.natsUrl);
    const control = await connect({ servers: testEnv.natsUrl, name: `${ns}-control` });
    control.subscribe(cutSubject(ns), {
      callback: (_err, msg) => {
        proxy.cutAll();
        msg.respond();
      },
    });
    await control.flush();
    const transport = await createNatsTransport({
      url: proxy.url,
      subjectPrefix: ns,
      connectionName: ns,
      ackWaitMs: 5_000,
      reconnectWaitMs: 50,
      logger: null,
    });
    if (!(await transport.waitUntilReady(10_000))) throw new Error('NATS transport not ready');
    const wrapped: Transport = {
      ...transport,
      async close() {
        await transport.close();
        await proxy.close();
        await control.close();
      },
    };
    return wrapped;
  },

  async prepare(ns) {
    await admin(async (nc) =>
      declareTopology(await jetstreamManager(nc), { streams: [{ name: ns, subjects: [`${ns}.>`] }] }),
    );
  },

  async cutConnections(ns) {
    await admin(async (nc) => {
      // Every process of the namespace answers once it has cut; wait until the answers stop.
      const answers = await nc.requestMany(cutSubject(ns), undefined, {
        strategy: 'stall',
        stall: 250,
        maxWait: 5_000,
      });
      for await (const answer of answers) void answer;
    });
  },

  async cleanup(ns) {
    await admin(async (nc) => {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(ns).catch(() => false);
    });
  },
};

export default nats;
