/** Redis Streams transport: XADD publishing, consumer groups, XACK after the commit, claims of dead consumers' entries. */
export { createRedisStreamsTransport, type RedisStreamsTransport } from './transport.js';
export type { RedisStreamsTransportOptions } from './options.js';
export { createRedisStreamProbe, redisQueueName, type RedisStreamProbeOptions } from './queue-probe.js';
