import { systemClock, type Clock } from '../../core/clock.js';
import { InvalidOptionError } from '../../core/errors.js';
import { componentLogger } from '../../core/default-logger.js';
import { isLogger, type Logger } from '../../core/logger.js';
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
  readonly path: string | undefined;
  readonly database: SqliteDatabase | undefined;
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

function integerIn(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new InvalidOptionError(option, `must be an integer between ${min} and ${max}`);
  return n;
}

/** Sets defaults and validates; a bad option names itself and its allowed range. */
export function parseEmbeddedOptions(options: EmbeddedTransportOptions): EmbeddedTransportConfig {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object');
  const { path, database } = options;
  if ((path === undefined) === (database === undefined))
    throw new InvalidOptionError('path', 'give exactly one of "path" and "database"');
  if (path !== undefined && (typeof path !== 'string' || path.length === 0))
    throw new InvalidOptionError('path', 'must be a non-empty string');
  if (database !== undefined && (typeof database !== 'object' || typeof database.prepare !== 'function')) {
    throw new InvalidOptionError('database', 'must be an open better-sqlite3 Database');
  }
  const tablePrefix = options.tablePrefix ?? 'surety_log_';
  if (typeof tablePrefix !== 'string' || !TABLE_PREFIX.test(tablePrefix)) {
    throw new InvalidOptionError('tablePrefix', 'must be 1-41 letters, digits or _, not starting with a digit');
  }
  const pollIntervalMs = integerIn('pollIntervalMs', options.pollIntervalMs, 200, 5, 60_000);
  const leaseTtlMs = integerIn('leaseTtlMs', options.leaseTtlMs, 10_000, 100, 3_600_000);
  // Leases are renewed on poll ticks, every third of their lifetime.
  if (leaseTtlMs < 3 * pollIntervalMs)
    throw new InvalidOptionError('leaseTtlMs', `must be at least 3 x pollIntervalMs (${3 * pollIntervalMs})`);
  const synchronous = options.synchronous ?? 'full';
  if (synchronous !== 'full' && synchronous !== 'normal')
    throw new InvalidOptionError('synchronous', 'must be "full" or "normal"');
  const given = options.logger;
  if (given !== undefined && given !== null && !isLogger(given))
    throw new InvalidOptionError('logger', 'must have debug, info, warn and error methods');
  const clock = options.clock ?? systemClock;
  if (typeof clock.now !== 'function') throw new InvalidOptionError('clock', 'must have a now() method');
  return Object.freeze({
    path,
    database,
    tablePrefix,
    pollIntervalMs,
    leaseTtlMs,
    busyTimeoutMs: integerIn('busyTimeoutMs', options.busyTimeoutMs, 5_000, 0, 600_000),
    synchronous,
    maxBatchSize: integerIn('maxBatchSize', options.maxBatchSize, 1_000, 1, 100_000),
    logger: componentLogger(given, 'surety-embedded'),
    clock,
  });
}

/** Validated subscribe options. */
export interface EmbeddedSubscribeConfig {
  readonly group: string;
  readonly topics: readonly string[];
  readonly prefetch: number;
}

export function parseSubscribeOptions(options: SubscribeOptions): EmbeddedSubscribeConfig {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object');
  if (typeof options.group !== 'string' || options.group.length === 0)
    throw new InvalidOptionError('group', 'must be a non-empty string');
  // The doctor names a group's backlog `<topic>@<group>`, split at the last "@".
  if (options.group.includes('@')) throw new InvalidOptionError('group', 'must not contain "@"');
  if (!Array.isArray(options.topics) || options.topics.length === 0)
    throw new InvalidOptionError('topics', 'must be a non-empty array');
  for (const topic of options.topics) {
    if (typeof topic !== 'string' || topic.length === 0)
      throw new InvalidOptionError('topics', 'every topic must be a non-empty string');
  }
  return Object.freeze({
    group: options.group,
    topics: Object.freeze([...new Set(options.topics)]),
    prefetch: integerIn('prefetch', options.prefetch, 100, 1, 10_000),
  });
}
