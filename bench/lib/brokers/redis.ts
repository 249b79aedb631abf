/** Redis Streams: a stream of the scenario's own (`<tag>:<type>`), deleted between runs and at the end. */
import { Redis } from 'ioredis';
import { REDIS_URL, TYPE } from '../config.js';
import type { BrokerTarget } from './target.js';

export async function redisTarget(tag: string): Promise<BrokerTarget> {
  const redis = new Redis(REDIS_URL, { connectionName: 'bench-admin' });
  const prefix = `${tag}:`;
  // Surety's default stream of a topic: its prefix and the topic (the message type).
  const stream = prefix + TYPE;
  return {
    kind: 'redis',
    title: 'Redis Streams',
    raw: { contender: 'raw-redis-publisher', label: 'ioredis, pipelines of 1,000 XADD, 2 in flight' },
    async prepare() {
      await redis.del(stream);
      return { transport: { broker: 'redis', redisUrl: REDIS_URL, prefix }, raw: { redisUrl: REDIS_URL, stream } };
    },
    async held() {
      return redis.xlen(stream);
    },
    async close() {
      await redis.del(stream);
      await redis.quit();
    },
  };
}
