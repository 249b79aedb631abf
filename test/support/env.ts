/** Connection settings of the local services the tests use; override with environment variables. */
export const testEnv = {
  postgresUrl: process.env.SURETY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  mysqlUrl: process.env.SURETY_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  amqpUrl: process.env.SURETY_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: process.env.SURETY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  natsUrl: process.env.SURETY_TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
  /** Bootstrap brokers, comma-separated in the variable. */
  kafkaBrokers: (process.env.SURETY_TEST_KAFKA_BROKERS ?? 'kafka://127.0.0.1:9092').split(',').map((b) => b.trim()),
} as const;

/** A short unique name for isolating one test's schema, table prefix, queue or stream. */
export function uniqueName(label: string): string {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 24);
  const rand = Math.random().toString(36).slice(2, 8);
  return `t_${clean}_${Date.now().toString(36)}${rand}`;
}
