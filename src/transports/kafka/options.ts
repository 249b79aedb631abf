import { z } from 'zod';
import type { Logger } from '../../core/logger.js';
import { functionOption, integerIn, listOf, nonEmptyString } from '../../core/option-schemas.js';
import { loggerOption, parseOptions } from '../../core/options.js';
import { topologySchema, type KafkaTopology, type ResolvedKafkaTopology } from './topology.js';

export interface KafkaTransportOptions {
  /** Bootstrap brokers, `host:port` (or `kafka://host:port`), one or more. */
  readonly brokers: string | readonly string[];
  /** Client id shown by the broker (and used to find this transport's connections). Default `surety`. */
  readonly clientId?: string;
  /** Maps a topic to its Kafka topic name. Default: the topic itself. */
  readonly topicName?: (topic: string) => string;
  /** Maps a consumer group to its Kafka group id. Default: the group itself. */
  readonly groupId?: (group: string) => string;
  /** Topics created (if missing) before the first publish or subscription. */
  readonly topology?: KafkaTopology;
  /** A publish not acknowledged within this time rejects with SURETY_PUBLISH_TIMEOUT. Default 10000. */
  readonly publishTimeoutMs?: number;
  /** Most messages in one produce request; one request is in flight at a time. Default 500. */
  readonly maxBatch?: number;
  /** Connect timeout of one broker connection. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** How long `close()` and a revoked partition wait for in-flight handlers. Default 5000. */
  readonly closeTimeoutMs?: number;
  /**
   * How long `subscribe()` waits for a first connection (and the topology) when the transport has
   * none yet, e.g. at start while the broker is briefly away; then it rejects with
   * SURETY_CONNECTION_LOST. Default 30000.
   */
  readonly startTimeoutMs?: number;
  /** Consumer session timeout: a silent consumer loses its partitions after it. Default 10000. */
  readonly sessionTimeoutMs?: number;
  /** Consumer heartbeat interval. Default 1000. */
  readonly heartbeatIntervalMs?: number;
  /** Default prefetch of subscriptions. Default 100. */
  readonly prefetch?: number;
  /** Pino-compatible logger. Default: JSON lines on stderr at SURETY_LOG_LEVEL; `null` logs nothing. */
  readonly logger?: Logger | null;
}

export interface ResolvedKafkaOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly topicName: (topic: string) => string;
  readonly groupId: (group: string) => string;
  readonly topology: ResolvedKafkaTopology;
  readonly publishTimeoutMs: number;
  readonly maxBatch: number;
  readonly connectTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly startTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly prefetch: number;
  readonly logger: Logger;
}

const MAX_TIMEOUT_MS = 2_147_483_647; // setTimeout's limit
const BROKER = /^(?:kafka:\/\/)?([^\s/:]+):(\d{1,5})\/?$/;

const brokerSchema = z
  .string({ error: 'must be "host:port" or a list of them' })
  .regex(BROKER, { error: 'must be "host:port" (or kafka://host:port)' })
  .transform((s) => {
    const [, host, port] = BROKER.exec(s)!;
    return `${host}:${port}`;
  });

export const brokersSchema = z
  .union(
    [brokerSchema.transform((b) => [b]), listOf(brokerSchema).min(1, { error: 'must list at least one broker' })],
    {
      error: 'must be "host:port" or a non-empty list of them',
    },
  )
  .transform((list) => Object.freeze(list));

const schema = z.object(
  {
    brokers: brokersSchema,
    clientId: nonEmptyString().default('surety'),
    topicName: functionOption<(topic: string) => string>().optional(),
    groupId: functionOption<(group: string) => string>().optional(),
    topology: topologySchema.prefault({}),
    publishTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(10_000),
    maxBatch: integerIn(1, 10_000).default(500),
    connectTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(5_000),
    closeTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(5_000),
    startTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(30_000),
    sessionTimeoutMs: integerIn(6_000, 300_000).default(10_000),
    heartbeatIntervalMs: integerIn(100, 60_000).default(1_000),
    prefetch: integerIn(1, 100_000).default(100),
    logger: loggerOption('surety-kafka'),
  },
  { error: 'must be an object with at least "brokers"' },
);

/** Validates options once, into a frozen object; a bad option throws InvalidOptionError naming it. */
export function resolveOptions(input: KafkaTransportOptions): ResolvedKafkaOptions {
  const { topicName, groupId, ...rest } = parseOptions(schema, input, '');
  return Object.freeze({
    ...rest,
    topicName: topicName ?? ((topic: string) => topic),
    groupId: groupId ?? ((group: string) => group),
  });
}
