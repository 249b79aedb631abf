import { z } from 'zod';
import { systemClock, type Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { clockOption, integerIn, listOf, nonEmptyString, oneOf } from '../../core/option-schemas.js';
import { loggerOption, parseOptions } from '../../core/options.js';
import type { SubscribeOptions } from '../../ports/transport.js';
import type { SqliteDatabase } from './driver.js';

/** Options of {@link createEmbeddedTransport}. Give exactly one of `path` and `database`. */
export interface EmbeddedTransportOptions {
  /** File holding the log, created if missing. `':memory:'` keeps a private log for this transport only. */
  path?: string;
  /**
   * An open better-sqlite3 database to use instead of `path`. The caller keeps ownership: `close()`
   * leaves it open. The transport sets WAL, busy_timeout and synchronous on it, and runs its own
   * transactions on it, so give it a connection of its own.
   */
  database?: SqliteDatabase;
  /** Prefix of the transport's tables. Default `'surety_log_'`. */
  tablePrefix?: string;
  /** How often subscribers look for rows appended by other processes. Default 200 ms. */
  pollIntervalMs?: number;
  /**
   * How long a subscriber's claim on a (group, topic) outlives its last renewal: after a crash, the
   * next subscriber of the group waits this long. Default 10,000 ms; at least 3 x pollIntervalMs.
   */
  leaseTtlMs?: number;
  /** How long a statement waits for another connection's write lock. Default 5,000 ms. */
  busyTimeoutMs?: number;
  /** `'full'` (default) survives power loss once a publish resolves; `'normal'` only a process crash. */
  synchronous?: 'full' | 'normal';
  /** Most publishes committed in one transaction (group commit). Default 1,000. */
  maxBatchSize?: number;
  /**
   * Where lease changes and failed background steps are reported. Default: JSON lines on stderr at
   * SURETY_LOG_LEVEL (default info); `null` logs nothing.
   */
  logger?: Logger | null;
  /** Stamps appended rows and lease expiries; processes sharing a log must agree on it (wall time). */
  clock?: Clock;
}

/** Validated, frozen options. */
export interface EmbeddedTransportConfig {
  readonly path?: string | undefined;
  readonly database?: SqliteDatabase | undefined;
  readonly tablePrefix: string;
  readonly pollIntervalMs: number;
  readonly leaseTtlMs: number;
  readonly busyTimeoutMs: number;
  readonly synchronous: 'full' | 'normal';
  readonly maxBatchSize: number;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** Table prefixes: safe to splice into SQL unquoted. */
export const TABLE_PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;

const tablePrefixRule = 'must be 1-41 letters, digits or _, not starting with a digit';

const schema = z
  .object(
    {
      path: nonEmptyString().optional(),
      database: z
        .custom<SqliteDatabase>(
          (d) => typeof d === 'object' && d !== null && typeof (d as SqliteDatabase).prepare === 'function',
          'must be an open better-sqlite3 Database',
        )
        .optional(),
      tablePrefix: z
        .string({ error: tablePrefixRule })
        .regex(TABLE_PREFIX, { error: tablePrefixRule })
        .default('surety_log_'),
      pollIntervalMs: integerIn(5, 60_000).default(200),
      leaseTtlMs: integerIn(100, 3_600_000).default(10_000),
      busyTimeoutMs: integerIn(0, 600_000).default(5_000),
      synchronous: oneOf(['full', 'normal']).default('full'),
      maxBatchSize: integerIn(1, 100_000).default(1_000),
      logger: loggerOption('surety-embedded'),
      clock: clockOption(systemClock),
    },
    { error: 'must be an object' },
  )
  .superRefine((o, ctx) => {
    if ((o.path === undefined) === (o.database === undefined))
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'give exactly one of "path" and "database"' });
    // Leases are renewed on poll ticks, every third of their lifetime.
    if (o.leaseTtlMs < 3 * o.pollIntervalMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['leaseTtlMs'],
        message: `must be at least 3 x pollIntervalMs (${3 * o.pollIntervalMs})`,
      });
    }
  });

/** Sets defaults and validates; a bad option names itself and its allowed range. */
export function parseEmbeddedOptions(options: EmbeddedTransportOptions): EmbeddedTransportConfig {
  return parseOptions(schema, options, '');
}

/** Validated subscribe options. */
export interface EmbeddedSubscribeConfig {
  readonly group: string;
  readonly topics: readonly string[];
  readonly prefetch: number;
}

const subscribeSchema = z.object(
  {
    // The doctor names a group's backlog `<topic>@<group>`, split at the last "@".
    group: nonEmptyString().refine((g) => !g.includes('@'), 'must not contain "@"'),
    topics: listOf(nonEmptyString())
      .min(1, { error: 'must be a non-empty array' })
      .transform((topics) => Object.freeze([...new Set(topics)])),
    prefetch: integerIn(1, 10_000).default(100),
  },
  { error: 'must be an object' },
);

export function parseSubscribeOptions(options: SubscribeOptions): EmbeddedSubscribeConfig {
  return parseOptions(subscribeSchema, options, '');
}

const purgeSchema = z.object({ batchSize: integerIn(1).default(10_000) }, { error: 'must be an object' });

/** Options of `purgeCommitted`. */
export function parsePurgeOptions(options: { batchSize?: number } | undefined): { readonly batchSize: number } {
  return parseOptions(purgeSchema, options, '');
}
