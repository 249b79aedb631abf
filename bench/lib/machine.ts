/** The conditions a run states beside its figures: cores, CPU, and the versions of what ran. */
import { cpus } from 'node:os';
import { connect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import { AMQP_URL, NATS_URL, PG_URL, REDIS_URL } from './config.js';

/** The brokers only the brokers scenario uses: a broker that is not up says so instead of failing the run. */
async function brokerVersions() {
  const nats = await connect({ servers: NATS_URL, name: 'bench-machine' }).then(
    async (nc) => {
      const v = nc.info?.version ?? 'unknown';
      await nc.close();
      return v;
    },
    () => 'not reachable',
  );
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const redisVersion = await redis
    .connect()
    .then(() => redis.info('server'))
    .then(
      (info) => /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
      () => 'not reachable',
    )
    .finally(() => redis.disconnect());
  // Kafka reports no version over its protocol; ensure-services runs SURETY_KAFKA_VERSION (4.4.0).
  return { kafka: process.env.SURETY_KAFKA_VERSION ?? '4.4.0', nats, redis: redisVersion };
}

export async function describeMachine() {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const postgres = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
  await client.end();
  const conn = await amqp.connect(AMQP_URL);
  const props = (conn.connection as unknown as { serverProperties?: Record<string, unknown> }).serverProperties;
  await conn.close();
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    postgres,
    rabbitmq: String(props?.version ?? 'unknown'),
    ...(await brokerVersions()),
  };
}
