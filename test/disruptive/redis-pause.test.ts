/** Pauses the shared Redis' writes (CLIENT PAUSE): runs alone (see vitest.disruptive.config.ts). */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedisStreamsTransport, type RedisStreamsTransport } from '../../src/transports/redis/index.js';
import { deleteStreams } from '../support/brokers/redis.js';
import { testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('Redis that does not answer a publish in time', () => {
  let prefix: string;
  let admin: Redis;
  let transport: RedisStreamsTransport;

  beforeEach(async () => {
    prefix = `${uniqueName('pause')}:`;
    admin = new Redis(testEnv.redisUrl);
    transport = await createRedisStreamsTransport({
      url: testEnv.redisUrl,
      prefix,
      publishTimeoutMs: 200,
      logger: null,
    });
    expect(await transport.waitUntilReady(10_000)).toBe(true);
  });

  afterEach(async () => {
    await admin.call('CLIENT', 'UNPAUSE');
    await transport.close();
    await deleteStreams(admin, prefix);
    admin.disconnect();
  });

  it('fails the publish with SURETY_PUBLISH_TIMEOUT, never resolving it; the XADD may still land later', async () => {
    const message = testMessage('paused');
    await admin.call('CLIENT', 'PAUSE', 5_000, 'WRITE');
    const attempt = transport.publish({ topic: 't', message });
    await expect(attempt).rejects.toMatchObject({ code: 'SURETY_PUBLISH_TIMEOUT' });
    await admin.call('CLIENT', 'UNPAUSE');
    // What a timeout means: unknown, not lost. The relay publishes again; the inbox drops the repeat.
    await waitFor('the paused XADD to be written', async () => (await admin.xlen(`${prefix}t`)) === 1, 10_000);
    await expect(transport.publish({ topic: 't', message: testMessage('after') })).resolves.toBeUndefined();
  });
});
