import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedisStreamsTransport, type RedisStreamsTransport } from '../../src/transports/redis/index.js';
import { DeliveryLog, testMessage } from '../conformance/transport-suite.js';
import { PrivateRedis } from './fixtures/redis-private-server.js';

describe('a Redis server with appendfsync always, SIGKILLed while publishes are in flight', () => {
  let server: PrivateRedis;
  let transport: RedisStreamsTransport;

  beforeEach(async () => {
    server = await PrivateRedis.start();
    transport = await createRedisStreamsTransport({
      url: server.url,
      reconnect: { initialMs: 50, maxMs: 500 },
      logger: null,
    });
    expect(await transport.waitUntilReady(10_000)).toBe(true);
  });

  afterEach(async () => {
    await transport.close();
    await server.remove();
  });

  it('keeps every publish that resolved, and the transport publishes and consumes again after the restart', async () => {
    const confirmed = new Set<string>();
    let [failed, down] = [0, false];
    let firstConfirms!: () => void;
    const enough = new Promise<void>((resolve) => (firstConfirms = resolve));
    // A relay's shape: lanes of publishes in flight, each waiting while the transport is not ready.
    const lane = async (): Promise<void> => {
      for (let n = 0; !down && n < 10_000; n++) {
        if (!transport.isReady()) {
          await transport.waitUntilReady(100);
          continue;
        }
        const message = testMessage(`m${n}`);
        try {
          await transport.publish({ topic: 't', message });
          confirmed.add(message.id);
          if (confirmed.size === 200) firstConfirms();
        } catch {
          failed++;
        }
      }
    };
    const lanes = Promise.all(Array.from({ length: 20 }, lane));
    await enough;
    await server.kill();
    down = true;
    await lanes;
    expect(failed).toBeGreaterThan(0); // publishes were in flight when it died

    await server.start();
    expect(await transport.waitUntilReady(30_000)).toBe(true);
    const log = new DeliveryLog();
    await transport.subscribe({ group: 'g', topics: ['t'], prefetch: 500 }, log.handler);
    await log.until(
      `all ${confirmed.size} confirmed messages`,
      (l) => [...confirmed].every((id) => l.countOf(id) > 0),
      60_000,
    );
    const after = testMessage('after');
    await transport.publish({ topic: 't', message: after });
    await log.until('a message published after the restart', (l) => l.countOf(after.id) === 1);
  });
});
