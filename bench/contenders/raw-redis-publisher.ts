/**
 * Redis Streams' ceiling: ioredis pipelines of 1,000 `XADD`s of a 1 KiB body and an id field, two
 * pipelines in flight; an entry counts once its XADD replied with an entry id.
 */
import { Redis } from 'ioredis';
import { PAYLOAD } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { sendWindowed } from '../lib/windowed.js';

interface Args {
  readonly redisUrl: string;
  readonly stream: string;
  readonly messages: number;
}

serveContender<Args>(async ({ redisUrl, stream, messages }) => {
  const redis = new Redis(redisUrl, { connectionName: 'bench-raw-redis' });
  const body = Buffer.from(JSON.stringify(PAYLOAD));
  await redis.ping();
  return {
    async run() {
      const sent = await sendWindowed(messages, 1_000, 2, async (first, count) => {
        const pipeline = redis.pipeline();
        for (let i = 0; i < count; i++) pipeline.xadd(stream, '*', 'id', String(first + i), 'body', body);
        for (const [err, id] of (await pipeline.exec()) ?? []) {
          if (err || typeof id !== 'string') throw err ?? new Error(`XADD replied ${String(id)}`);
        }
      });
      return { sent };
    },
    async close() {
      await redis.quit();
    },
  };
});
