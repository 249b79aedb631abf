import { z } from 'zod';
import type { Logger } from '../../core/logger.js';
import { functionOption, integerIn, listOf, nonEmptyString } from '../../core/option-schemas.js';
import { loggerOption, parseOptions } from '../../core/options.js';
import { topologySchema, type NatsTopology, type ResolvedNatsTopology } from './topology.js';

/** JetStream's max_ack_pending is unbounded; Surety caps what one subscription holds unsettled. */
export const MAX_PREFETCH = 65_535;

export interface NatsTransportOptions {
  /** `nats://user:pass@host:4222`, or a list of servers of one cluster. */
  readonly url: string | readonly string[];
  /** Connection name shown by the server's monitoring. Default `surety`. */
  readonly connectionName?: string;
  /** Subject of a topic is `<subjectPrefix>.<topic>`; without a prefix, the topic itself. */
  readonly subjectPrefix?: string;
  /** Maps a topic to its subject; overrides `subjectPrefix`. */
  readonly subject?: (topic: string) => string;
  /** Streams ensured on every (re)connect, before the transport reports ready. */
  readonly topology?: NatsTopology;
  /** A publish without its PubAck within this time rejects with SURETY_PUBLISH_TIMEOUT. Default 10000. */
  readonly publishTimeoutMs?: number;
  /** How long `close()` waits for in-flight handlers. Default 5000. */
  readonly closeTimeoutMs?: number;
  /** How long `subscribe()` waits for a first connection; then SURETY_CONNECTION_LOST. Default 30000. */
  readonly startTimeoutMs?: number;
  /** Default prefetch of subscriptions: the durable consumer's `max_ack_pending`. Default 100. */
  readonly prefetch?: number;
  /** The consumer's `ack_wait`: unsettled longer than this (without `working()`), redelivered. Default 30000. */
  readonly ackWaitMs?: number;
  /**
   * The consumer's `max_deliver`; its last delivery reaches the handler marked `exhausted`, to be
   * recorded as a dead letter. At least 2. Default 20.
   */
  readonly maxDeliver?: number;
  /** Delay JetStream waits before redelivering a message handed back with `retry()`. Default 0. */
  readonly retryDelayMs?: number;
  /** The durable consumer of a group. Default: the group, with characters NATS forbids replaced by `_`. */
  readonly consumerForGroup?: (group: string) => string;
  /** Wait between reconnect attempts (the client retries forever). Default 250. */
  readonly reconnectWaitMs?: number;
  /** Pino-compatible logger. Default: JSON lines on stderr at SURETY_LOG_LEVEL; `null` logs nothing. */
  readonly logger?: Logger | null;
}

export interface ResolvedNatsOptions {
  readonly servers: readonly string[];
  readonly connectionName: string;
  readonly subject: (topic: string) => string;
  readonly topology: ResolvedNatsTopology;
  readonly publishTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly startTimeoutMs: number;
  readonly prefetch: number;
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly retryDelayMs: number;
  readonly consumerForGroup: (group: string) => string;
  readonly reconnectWaitMs: number;
  readonly logger: Logger;
}

const MAX_TIMEOUT_MS = 2_147_483_647; // setTimeout's limit
const serverUrl = z
  .string({ error: 'must be a nats:// URL or a list of them' })
  .refine((s) => /^(nats|tls|ws|wss):\/\/[^\s]+$/.test(s) || /^[^\s:/]+(:\d+)?$/.test(s), {
    error: 'must be a nats:// URL or a list of them',
  });
/** A subject token: no spaces, and none of the wildcards or separators. */
const subjectPrefix = z
  .string({ error: 'must be a subject without spaces or wildcards' })
  .regex(/^[^\s*>]+$/, { error: 'must be a subject without spaces or wildcards' })
  .refine((s) => !s.startsWith('.') && !s.endsWith('.') && !s.includes('..'), {
    error: 'must be a subject without spaces or wildcards',
  });

const schema = z.object(
  {
    url: z.union([serverUrl, listOf(serverUrl).min(1, { error: 'must list at least one server' })]),
    connectionName: nonEmptyString().default('surety'),
    subjectPrefix: subjectPrefix.optional(),
    subject: functionOption<(topic: string) => string>().optional(),
    topology: topologySchema.prefault({}),
    publishTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(10_000),
    closeTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(5_000),
    startTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(30_000),
    prefetch: integerIn(1, MAX_PREFETCH).default(100),
    ackWaitMs: integerIn(100, MAX_TIMEOUT_MS).default(30_000),
    maxDeliver: integerIn(2, 1_000_000).default(20),
    retryDelayMs: integerIn(0, MAX_TIMEOUT_MS).default(0),
    consumerForGroup: functionOption<(group: string) => string>().optional(),
    reconnectWaitMs: integerIn(1, MAX_TIMEOUT_MS).default(250),
    logger: loggerOption('surety-nats'),
  },
  { error: 'must be an object with at least "url"' },
);

/** Validates options once, into a frozen object; a bad option throws InvalidOptionError naming it. */
export function resolveOptions(input: NatsTransportOptions): ResolvedNatsOptions {
  const { url, subjectPrefix: prefix, subject, consumerForGroup, ...rest } = parseOptions(schema, input, '');
  return Object.freeze({
    ...rest,
    servers: Object.freeze(typeof url === 'string' ? [url] : [...url]),
    subject: subject ?? (prefix === undefined ? (topic: string) => topic : (topic: string) => `${prefix}.${topic}`),
    consumerForGroup: consumerForGroup ?? consumerName,
  });
}

/** A consumer name NATS accepts: no `.`, `*`, `>`, path separators or whitespace. */
export function consumerName(group: string): string {
  return group.replace(/[.*>/\\\s]/g, '_');
}
