// The broker-fault suite on a redis-server of its own (append-only, fsync on every write), SIGKILLed
// and started again: it stops no shared server, so it runs beside the other tests.
import { Redis } from 'ioredis';
import { createRedisStreamsTransport } from '../../src/transports/redis/index.js';
import { runBrokerFaultConformance } from '../conformance/transport-suite.js';
import { uniqueName } from '../support/env.js';
import { PrivateRedis } from './fixtures/redis-private-server.js';

runBrokerFaultConformance('redis', async () => {
  const server = await PrivateRedis.start();
  const prefix = `${uniqueName('faults')}:`;
  const transport = await createRedisStreamsTransport({ url: server.url, prefix, claimIdleMs: 2_000, logger: null });
  if (!(await transport.waitUntilReady(10_000))) throw new Error('Redis transport not ready');
  return {
    transport,
    uniqueTopic: (label) => uniqueName(label),
    prepareTopic: async (topic, group) => {
      const admin = new Redis(server.url);
      try {
        await admin.call('XGROUP', 'CREATE', `${prefix}${topic}`, group, '0', 'MKSTREAM');
      } finally {
        admin.disconnect();
      }
    },
    stopBroker: () => server.kill(),
    startBroker: () => server.start(),
    teardown: async () => {
      await transport.close();
      await server.remove();
    },
  };
});
