import { Redis } from 'ioredis';
import type { Transport } from '../../../src/ports/transport.js';
import { createRedisStreamsTransport } from '../../../src/transports/redis/index.js';
import { testEnv } from '../env.js';
import type { BrokerUnderTest } from './broker-under-test.js';

/**
 * Redis Streams for the end-to-end tests: namespace `ns` is a stream prefix (`<ns>:`) and the
 * connection name of its transports, so that cutConnections finds them in `CLIENT LIST`.
 * Entries a killed consumer held are claimed by a live one after two seconds.
 */
const redis: BrokerUnderTest = {
  name: 'redis',

  async open(ns: string): Promise<Transport> {
    const transport = await createRedisStreamsTransport({
      url: testEnv.redisUrl,
      prefix: `${ns}:`,
      connectionName: `${ns}:`,
      claimIdleMs: 2_000,
      reconnect: { initialMs: 50, maxMs: 1_000 },
      logger: null,
    });
    if (!(await transport.waitUntilReady(10_000))) {
      await transport.close();
      throw new Error(`Redis at ${testEnv.redisUrl} not ready within 10 s`);
    }
    return transport;
  },

  prepare: (ns, topic, group) =>
    withAdmin(async (admin) => {
      await admin.call('XGROUP', 'CREATE', `${ns}:${topic}`, group, '0', 'MKSTREAM').catch((err: Error) => {
        if (!err.message.startsWith('BUSYGROUP')) throw err;
      });
    }),

  cutConnections: (ns) => withAdmin(async (admin) => void (await killClients(admin, `${ns}:`))),

  cleanup: (ns) => withAdmin((admin) => deleteStreams(admin, `${ns}:`)),
};

export default redis;

async function withAdmin<T>(work: (admin: Redis) => Promise<T>): Promise<T> {
  const admin = new Redis(testEnv.redisUrl, { connectionName: 'surety-test-admin' });
  try {
    return await work(admin);
  } finally {
    admin.disconnect();
  }
}

/** Deletes every key under `prefix` (a test's streams). */
export async function deleteStreams(admin: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
    cursor = next;
    if (keys.length > 0) await admin.del(...keys);
  } while (cursor !== '0');
}

/**
 * Kills, from the server's side, every client connection whose name starts with `namePrefix`
 * (`CLIENT KILL ID` for each, found in `CLIENT LIST`), as a network fault would. Returns how many.
 */
export async function killClients(admin: Redis, namePrefix: string): Promise<number> {
  const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'normal')) as string;
  const ids = list
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2) as [string, string])))
    .filter((c) => typeof c['name'] === 'string' && c['name'].startsWith(namePrefix))
    .map((c) => c['id']!);
  for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
  return ids.length;
}
