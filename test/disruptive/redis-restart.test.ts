/** Shuts the shared Redis down and starts it again: runs alone (see vitest.disruptive.config.ts). */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedisStreamsTransport, type RedisStreamsTransport } from '../../src/transports/redis/index.js';
import { deleteStreams } from '../support/brokers/redis.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { redisAnswers } from '../transports/fixtures/redis-private-server.js';

const exec = promisify(execFile);
const services = fileURLToPath(new URL('../../scripts/services/', import.meta.url));

/** Starts Redis with the very command ensure-services uses (scripts/services/redis.mjs). */
async function startRedis(): Promise<void> {
  const code = `
    import { redis } from ${JSON.stringify(`${services}redis.mjs`)};
    import { run } from ${JSON.stringify(`${services}tools.mjs`)};
    const { start } = redis();
    if (!start) throw new Error('redis-server is not installed');
    const result = await run(start.file, start.args);
    if (!result.ok) throw new Error(result.output);`;
  await exec(process.execPath, ['--input-type=module', '-e', code], { timeout: 60_000 });
}

describe('Redis shut down mid-run and started again', () => {
  let prefix: string;
  let transport: RedisStreamsTransport;

  beforeEach(async () => {
    prefix = `${uniqueName('restart')}:`;
    transport = await createRedisStreamsTransport({
      url: testEnv.redisUrl,
      prefix,
      reconnect: { initialMs: 50, maxMs: 500 },
      logger: null,
    });
    expect(await transport.waitUntilReady(10_000)).toBe(true);
  });

  afterEach(async () => {
    await transport.close();
    if (!(await redisAnswers(testEnv.redisUrl))) await startRedis();
    const admin = new Redis(testEnv.redisUrl);
    await deleteStreams(admin, prefix);
    admin.disconnect();
  });

  afterAll(async () => {
    if (!(await redisAnswers(testEnv.redisUrl))) await startRedis(); // never leave Redis down for the next test
  });

  it('reconnects by itself; publishes fail while it is down, and publishing and consuming work again after', async () => {
    const log = new DeliveryLog();
    await transport.subscribe({ group: 'g', topics: ['t'] }, log.handler);
    const before = testMessage('before');
    await transport.publish({ topic: 't', message: before });
    await log.until('the message before the restart', (l) => l.countOf(before.id) === 1);

    await exec('redis-cli', ['-u', testEnv.redisUrl, 'shutdown', 'nosave'], { timeout: 30_000 });
    await waitFor('the transport to notice', () => !transport.isReady(), 10_000);
    await expect(transport.publish({ topic: 't', message: testMessage('down') })).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });

    await startRedis();
    expect(await transport.waitUntilReady(30_000)).toBe(true);
    // The server kept nothing (--save "", no AOF): the subscription recreates its group on NOGROUP.
    const after = testMessage('after');
    await waitFor('a publish to go through', async () =>
      transport.publish({ topic: 't', message: after }).then(
        () => true,
        () => false,
      ),
    );
    await log.until('the message after the restart', (l) => l.countOf(after.id) === 1, 30_000);
    expect(log.countOf(before.id)).toBe(1);
  });
});
