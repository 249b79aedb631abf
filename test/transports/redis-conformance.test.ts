import { Redis } from 'ioredis';
import { createRedisStreamsTransport, type RedisStreamsTransport } from '../../src/transports/redis/index.js';
import { runTransportConformance } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { deleteStreams, killClients } from './fixtures/redis-admin.js';

const capabilities = {
  unroutableDetection: false, // XADD succeeds whether or not a group reads the stream
  persistent: true,
  redeliveryCount: true,
  checkpoint: false,
  orderedPerTopic: true,
  connectionCut: true,
};

runTransportConformance(
  'redis',
  async () => {
    // Each test gets its own stream prefix; groups ('g1', 'g2') repeat, streams do not.
    const prefix = `${uniqueName('conformance')}:`;
    const opened: RedisStreamsTransport[] = [];
    const open = async (): Promise<RedisStreamsTransport> => {
      const transport = await createRedisStreamsTransport({
        url: testEnv.redisUrl,
        prefix,
        connectionName: prefix,
        claimIdleMs: 2_000,
        retryDelayMs: 50,
        logger: null,
      });
      opened.push(transport);
      if (!(await transport.waitUntilReady(10_000))) throw new Error('Redis transport not ready');
      return transport;
    };
    const admin = new Redis(testEnv.redisUrl);
    // Built apart from the return so that suites without connectionCut accept its extra member.
    const fixture = {
      transport: await open(),
      uniqueTopic: (label: string) => uniqueName(label),
      prepareTopic: async (topic: string, group: string) => {
        await admin.call('XGROUP', 'CREATE', `${prefix}${topic}`, group, '0', 'MKSTREAM').catch((err: Error) => {
          if (!err.message.startsWith('BUSYGROUP')) throw err;
        });
      },
      openAnother: open,
      cutConnections: async () => {
        if ((await killClients(admin, prefix)) === 0) throw new Error('no connection to cut');
      },
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        await deleteStreams(admin, prefix);
        admin.disconnect();
      },
    };
    return fixture;
  },
  capabilities,
);
