import { z } from 'zod';
import { backoffSchema, createBackoff, type Backoff, type BackoffOptions } from '../../core/backoff.js';
import type { Logger } from '../../core/logger.js';
import { booleanOption, functionOption, integerIn, nonEmptyString, oneOf } from '../../core/option-schemas.js';
import { loggerOption, parseOptions } from '../../core/options.js';
import type { NodeOrder } from './node-rotation.js';
import { nodeUrlsSchema } from './node-urls.js';
import { topologySchema, type ResolvedTopology, type Topology } from './topology.js';

/** Most unacknowledged deliveries a channel may be given (AMQP's prefetch-count is 16 bits). */
export const MAX_PREFETCH = 65_535;

/** Where a topic is published: exchange and routing key. */
export interface RabbitMqRoute {
  readonly exchange: string;
  readonly routingKey: string;
}

export interface RabbitMqTransportOptions {
  /**
   * `amqp://user:pass@host:5672/vhost` (or `amqps://`), or a list of them, one per cluster node:
   * the connection fails over to the next node when its node stops. Not a comma-separated string.
   */
  readonly url: string | readonly string[];
  /**
   * With several nodes, where connecting starts: `random` (default) spreads processes over the
   * nodes, `listed` starts at the first. Either way, a failed connect or a loss moves to the next.
   */
  readonly nodeOrder?: NodeOrder;
  /** A node that has not completed the AMQP handshake within this time counts as down. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Connection name shown by the management UI and `rabbitmqctl list_connections`. Default `surety`. */
  readonly connectionName?: string;
  /** Exchange topics are published to. Default `surety`. */
  readonly exchange?: string;
  /** Declare `exchange` as a durable topic exchange on every connect. Default true. */
  readonly declareExchange?: boolean;
  /** Maps a topic to its exchange and routing key. Default: `exchange` and the topic itself. */
  readonly route?: (topic: string) => RabbitMqRoute;
  /** Declared on every (re)connect, before the transport reports ready. */
  readonly topology?: Topology;
  /** A publish not confirmed within this time rejects with SURETY_PUBLISH_TIMEOUT. Default 10000. */
  readonly publishTimeoutMs?: number;
  /** How long `close()` waits for in-flight confirms and handlers. Default 5000. */
  readonly closeTimeoutMs?: number;
  /**
   * How long `subscribe()` waits for a first connection (and the declared topology) when the
   * transport has none yet, e.g. at start while the broker is briefly away; then it rejects with
   * SURETY_CONNECTION_LOST. Default 30000.
   */
  readonly startTimeoutMs?: number;
  /** Default prefetch of subscriptions. Default 100. */
  readonly prefetch?: number;
  /** Queue consumed for a group and topic. Default: the group name. */
  readonly queueForGroup?: (group: string, topic: string) => string;
  /** Delays between reconnect attempts. Default 100 ms doubling to 10 s, 20% jitter. */
  readonly reconnect?: BackoffOptions;
  /** Pino-compatible logger. Default: JSON lines on stderr at SURETY_LOG_LEVEL (default info); `null` logs nothing. */
  readonly logger?: Logger | null;
}

export interface ResolvedRabbitMqOptions {
  /** One per cluster node, in the order given. */
  readonly urls: readonly string[];
  readonly nodeOrder: NodeOrder;
  readonly connectTimeoutMs: number;
  readonly connectionName: string;
  readonly exchange: string;
  readonly route: (topic: string) => RabbitMqRoute;
  /** The user's topology plus, unless disabled, the default exchange. */
  readonly topology: ResolvedTopology;
  readonly publishTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly startTimeoutMs: number;
  readonly prefetch: number;
  readonly queueForGroup: (group: string, topic: string) => string;
  readonly reconnect: Backoff;
  readonly logger: Logger;
}

const DEFAULT_RECONNECT: BackoffOptions = { initialMs: 100, factor: 2, maxMs: 10_000, jitter: 0.2 };
const MAX_TIMEOUT_MS = 2_147_483_647; // setTimeout's limit
const NODE_ORDERS = ['random', 'listed'] as const;

const schema = z.object(
  {
    url: nodeUrlsSchema('url'),
    nodeOrder: oneOf(NODE_ORDERS).default('random'),
    connectTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(5_000),
    connectionName: nonEmptyString().default('surety'),
    exchange: nonEmptyString().default('surety'),
    declareExchange: booleanOption().default(true),
    route: functionOption<(topic: string) => RabbitMqRoute>().optional(),
    topology: topologySchema.prefault({}),
    publishTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(10_000),
    closeTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(5_000),
    startTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(30_000),
    prefetch: integerIn(1, MAX_PREFETCH).default(100),
    queueForGroup: functionOption<(group: string, topic: string) => string>().optional(),
    reconnect: backoffSchema.optional(),
    logger: loggerOption('surety-rabbitmq'),
  },
  { error: 'must be an object with at least "url"' },
);

/** Validates options once, into a frozen object; a bad option throws InvalidOptionError naming it. */
export function resolveOptions(input: RabbitMqTransportOptions): ResolvedRabbitMqOptions {
  const { url, topology, exchange, declareExchange, route, queueForGroup, reconnect, ...rest } = parseOptions(
    schema,
    input,
    '',
  );
  const withDefault =
    declareExchange && !topology.exchanges.some((e) => e.name === exchange)
      ? {
          ...topology,
          exchanges: Object.freeze([{ name: exchange, type: 'topic' as const, durable: true }, ...topology.exchanges]),
        }
      : topology;
  return Object.freeze({
    ...rest,
    urls: url,
    exchange,
    route: route ?? ((topic: string) => ({ exchange, routingKey: topic })),
    topology: Object.freeze(withDefault),
    queueForGroup: queueForGroup ?? ((group: string) => group),
    reconnect: createBackoff({ ...DEFAULT_RECONNECT, ...reconnect }, 'reconnect'),
  });
}
