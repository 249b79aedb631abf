/** Where the servers are, what the scenarios run with, and the message shape every contender sends. */
export const PG_URL = process.env.SURETY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const AMQP_URL = process.env.SURETY_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** `host:port` each, as the raw client wants them (the variable may say kafka://host:port). */
export const KAFKA_BROKERS = (process.env.SURETY_TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) =>
  b
    .trim()
    .replace(/^kafka:\/\//, '')
    .replace(/\/$/, ''),
);
export const NATS_URL = process.env.SURETY_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.SURETY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const int = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer, got ${process.env[name]}`);
  return v;
};

export const settings = {
  repetitions: int('BENCH_REPETITIONS', 5),
  relayMessages: int('BENCH_RELAY_MESSAGES', 50_000),
  lifetimeMessages: int('BENCH_LIFETIME_MESSAGES', 10_000),
  latencySeconds: int('BENCH_LATENCY_SECONDS', 20),
  latencyRate: int('BENCH_LATENCY_RATE', 200),
  latencyRepetitions: int('BENCH_LATENCY_REPETITIONS', 3),
  consumerMessages: int('BENCH_CONSUMER_MESSAGES', 20_000),
  flatRows: int('BENCH_FLAT_ROWS', 1_000_000),
  flatSmallRows: 10_000,
  flatBacklog: int('BENCH_FLAT_BACKLOG', 20_000),
  brokerMessages: int('BENCH_BROKER_MESSAGES', 20_000),
};

export const TYPE = 'bench.event';
/** Serialises to 1 KiB of JSON. */
export const PAYLOAD = { data: 'x'.repeat(1024 - 11) };
export const PREFETCH = 1_000;
