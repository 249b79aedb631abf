import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { backoffSchema, createBackoff, type Backoff, type BackoffOptions } from '../../core/backoff.js';
import type { Logger } from '../../core/logger.js';
import { functionOption, integerIn, nonEmptyString, oneOf, stringOption } from '../../core/option-schemas.js';
import { loggerOption, parseOptions } from '../../core/options.js';

export interface RedisStreamsTransportOptions {
  /** `redis://[user:password@]host:6379[/db]` or `rediss://` for TLS. */
  readonly url: string;
  /** Prefix of the stream a topic is published to. Default `surety:`. */
  readonly prefix?: string;
  /** Maps a topic to its stream. Default: `prefix` and the topic. */
  readonly streamForTopic?: (topic: string) => string;
  /**
   * Approximate cap on a stream's length (`XADD MAXLEN ~`). Trimming drops the oldest entries even
   * when a group has not read or acknowledged them: size it well above any backlog (see the docs).
   */
  readonly maxLen?: number;
  /** Approximate age cap (`XADD MINID ~ <now - maxAgeMs>`); excludes `maxLen`. */
  readonly maxAgeMs?: number;
  /**
   * After the XADDs of a batch, `WAIT count timeoutMs` in the same round trip: a publish resolves
   * only once `count` replicas acknowledged it, else fails with SURETY_PUBLISH_NACKED.
   */
  readonly waitReplicas?: { readonly count: number; readonly timeoutMs: number };
  /** A publish not answered within this time rejects with SURETY_PUBLISH_TIMEOUT. Default 10000. */
  readonly publishTimeoutMs?: number;
  /** A connect not ready within this time counts as failed (ioredis retries). Default 5000. */
  readonly connectTimeoutMs?: number;
  /** `CLIENT SETNAME` of every connection (subscriptions append `:sub`). Default `surety`. */
  readonly connectionName?: string;
  /**
   * This process's consumer name in its groups; a second subscription of the same group in one
   * transport appends `.2`, `.3`... Default `<host>-<pid>-<random>`. A stable name lets a restarted
   * process take its own pending entries back at once instead of after `claimIdleMs`.
   */
  readonly consumerName?: string;
  /** Where a group created by `subscribe` starts: `0` (default) the stream's oldest entry, `$` its end. */
  readonly groupStart?: '0' | '$';
  /** Default prefetch of subscriptions. Default 100. */
  readonly prefetch?: number;
  /** How long one `XREADGROUP` blocks waiting for entries. Default 5000. */
  readonly blockMs?: number;
  /** Entries pending this long on any consumer (one that died) are claimed by a live one. Default 30000. */
  readonly claimIdleMs?: number;
  /** How often a subscription looks for such entries. Default half of `claimIdleMs`, at most 10000. */
  readonly claimIntervalMs?: number;
  /** Delay before a delivery handed back with `retry()` is delivered again. Default 1000. */
  readonly retryDelayMs?: number;
  /**
   * Past this many deliveries an entry is handed over `exhausted` (`max_deliveries`), to be recorded
   * as a dead letter and acked. Default 20; `null`: never.
   */
  readonly maxDeliveries?: number | null;
  /** How long `close()` waits for in-flight publishes and handlers. Default 5000. */
  readonly closeTimeoutMs?: number;
  /** How long `subscribe()` waits for a first connection. Default 30000. */
  readonly startTimeoutMs?: number;
  /** Delays between reconnect attempts. Default 100 ms doubling to 5 s, 20% jitter. */
  readonly reconnect?: BackoffOptions;
  /** Pino-compatible logger. Default: JSON lines on stderr at SURETY_LOG_LEVEL; `null` logs nothing. */
  readonly logger?: Logger | null;
}

export interface ResolvedRedisOptions {
  readonly url: string;
  readonly streamForTopic: (topic: string) => string;
  readonly trim: readonly ['MAXLEN', number] | readonly ['MINID', number] | undefined;
  readonly waitReplicas?: { readonly count: number; readonly timeoutMs: number };
  readonly publishTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly connectionName: string;
  readonly consumerName: string;
  readonly groupStart: '0' | '$';
  readonly prefetch: number;
  readonly blockMs: number;
  readonly claimIdleMs: number;
  readonly claimIntervalMs: number;
  readonly retryDelayMs: number;
  readonly maxDeliveries: number | null;
  readonly closeTimeoutMs: number;
  readonly startTimeoutMs: number;
  readonly reconnect: Backoff;
  readonly logger: Logger;
}

const MAX_TIMEOUT_MS = 2_147_483_647; // setTimeout's limit
const DEFAULT_RECONNECT: BackoffOptions = { initialMs: 100, factor: 2, maxMs: 5_000, jitter: 0.2 };

const schema = z
  .object(
    {
      url: nonEmptyString().regex(/^rediss?:\/\//, { error: 'must be a redis:// or rediss:// URL' }),
      prefix: stringOption().default('surety:'),
      streamForTopic: functionOption<(topic: string) => string>().optional(),
      maxLen: integerIn(1).optional(),
      maxAgeMs: integerIn(1).optional(),
      waitReplicas: z
        .object(
          { count: integerIn(1, 1_000), timeoutMs: integerIn(1, MAX_TIMEOUT_MS) },
          { error: 'must be an object with "count" and "timeoutMs"' },
        )
        .optional(),
      publishTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(10_000),
      connectTimeoutMs: integerIn(1, MAX_TIMEOUT_MS).default(5_000),
      connectionName: nonEmptyString()
        .regex(/^[!-~]+$/, { error: 'must be printable ASCII without spaces' })
        .default('surety'),
      consumerName: nonEmptyString().optional(),
      groupStart: oneOf(['0', '$']).default('0'),
      prefetch: integerIn(1, 100_000).default(100),
      blockMs: integerIn(1, 60_000).default(5_000),
      claimIdleMs: integerIn(1, MAX_TIMEOUT_MS).default(30_000),
      claimIntervalMs: integerIn(1, MAX_TIMEOUT_MS).optional(),
      retryDelayMs: integerIn(0, MAX_TIMEOUT_MS).default(1_000),
      maxDeliveries: integerIn(1).nullable().default(20),
      closeTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(5_000),
      startTimeoutMs: integerIn(0, MAX_TIMEOUT_MS).default(30_000),
      reconnect: backoffSchema.optional(),
      logger: loggerOption('surety-redis'),
    },
    { error: 'must be an object with at least "url"' },
  )
  .refine((o) => o.maxLen === undefined || o.maxAgeMs === undefined, {
    error: 'must not be set together with maxLen: a stream is trimmed by length or by age',
    path: ['maxAgeMs'],
  });

/** Validates options once, into a frozen object; a bad option throws InvalidOptionError naming it. */
export function resolveOptions(input: RedisStreamsTransportOptions): ResolvedRedisOptions {
  const { prefix, streamForTopic, maxLen, maxAgeMs, consumerName, claimIntervalMs, reconnect, ...rest } = parseOptions(
    schema,
    input,
    '',
  );
  const trim =
    maxLen !== undefined
      ? (['MAXLEN', maxLen] as const)
      : maxAgeMs !== undefined
        ? (['MINID', maxAgeMs] as const)
        : undefined;
  return Object.freeze({
    ...rest,
    streamForTopic: streamForTopic ?? ((topic: string) => prefix + topic),
    trim,
    consumerName: consumerName ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    claimIntervalMs: claimIntervalMs ?? Math.max(10, Math.min(10_000, Math.floor(rest.claimIdleMs / 2))),
    reconnect: createBackoff({ ...DEFAULT_RECONNECT, ...reconnect }, 'reconnect'),
  });
}
