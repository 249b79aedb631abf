import { Redis } from 'ioredis';
import { createRedisStreamsTransport, type RedisStreamsTransport } from '../../src/transports/redis/index.js';
import { runTransportConformance } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { deleteStreams } from './fixtures/redis-admin.js';

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
    return {
      transport: await open(),
      uniqueTopic: (label) => uniqueName(label),
      prepareTopic: async (topic, group) => {
        await admin.call('XGROUP', 'CREATE', `${prefix}${topic}`, group, '0', 'MKSTREAM').catch((err: Error) => {
          if (!err.message.startsWith('BUSYGROUP')) throw err;
        });
      },
      openAnother: open,
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        await deleteStreams(admin, prefix);
        admin.disconnect();
      },
    };
  },
  { unroutableDetection: false, persistent: true, redeliveryCount: true, checkpoint: false, orderedPerTopic: true },
);
