import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { systemClock, type Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { loggerOption, parseOptions } from '../core/options.js';
import type { ConsumerStore } from '../ports/store.js';
import type { Subscriber } from '../ports/transport.js';
import type { ConsumerRetentionOptions } from './consumer-retention.js';

const MIN = 60_000;
/** The seeds' schedule: 1 min, 5 min, 30 min, 2 h, 8 h, 24 h, then 24 h again until the limit. */
export const DEFAULT_RETRY_SCHEDULE_MS = Object.freeze([1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 480 * MIN, 1440 * MIN]);

const DAY = 86_400_000;
const DEFAULT_RETENTION = Object.freeze({
  inboxWindowMs: 7 * DAY,
  settledDeadLettersMs: 30 * DAY,
  intervalMs: 60_000,
  batchSize: 1_000,
});

/** A retention window: 0 (keep forever) or at least a minute; anything shorter is a mistake, not a policy. */
const keepMs = z
  .number()
  .int()
  .refine((ms) => ms === 0 || ms >= 60_000, 'must be 0 (keep forever) or at least 60000 (one minute)');

const schema = z.object({
  logger: loggerOption('surety-consumer'),
  group: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/, 'must be 1-100 characters of letters, digits and . _ : -'),
  topics: z.array(z.string().min(1)).min(1).optional(),
  prefetch: z.number().int().min(1).max(10_000).default(200),
  /** Deliveries handled in one transaction, each under its own savepoint. */
  batchSize: z.number().int().min(1).max(1_000).default(100),
  /** How long an idle lane waits for more deliveries before a partial batch; 0 gathers one I/O turn. */
  batchWindowMs: z.number().int().min(0).max(1_000).default(0),
  /** Batches handled at once, each in its own transaction. */
  parallelism: z.number().int().min(1).max(64).default(1),
  /**
   * Per-message handlers of one batch running at once in its transaction (default 1: one at a time).
   * On PostgreSQL their statements then share round trips (pipelined: the store's own pool does it, or
   * give your pool `pipeline: true`); one at a time, each handler costs a round trip. With
   * perKeySerial, messages of one ordering key still run one after another. Set 1 for handlers that
   * read-modify-write rows that messages of other ordering keys also write: in one transaction they
   * would see each other's half-done work.
   */
  handlerConcurrency: z.number().int().min(1).max(256).default(1),
  /**
   * Messages of one ordering key (`envelope.orderingKey`: the producer's `orderingKey`, else its
   * `key`) are handled one after another, in delivery order: across lanes and within a batch.
   */
  perKeySerial: z.boolean().default(true),
  /** Surety's dead-letter table drives retries (default). Mutually exclusive with `brokerRetry`. */
  deadLetters: z
    .object({
      scheduleMs: z
        .array(z.number().int().min(0))
        .min(1)
        .default([...DEFAULT_RETRY_SCHEDULE_MS]),
      maxAttempts: z.number().int().min(1).max(1_000).default(12),
    })
    .optional(),
  /** The broker redelivers (nack) up to its delivery limit, then its dead-letter exchange. */
  brokerRetry: z.object({ enabled: z.literal(true) }).optional(),
  /** Pause between retries while the consumer's own database is unavailable. */
  unavailableBackoffMs: z.array(z.number().int().min(1)).min(1).default([200, 500, 1_000, 2_000, 5_000, 10_000]),
  instanceId: z.string().min(1).max(64).optional(),
  /**
   * What the consumer's periodic job deletes, in batches of `batchSize` every `intervalMs`: inbox rows
   * older than `inboxWindowMs`, and resolved or ignored dead letters (with their history) unchanged for
   * `settledDeadLettersMs`. 0 keeps that kind forever; `false` keeps everything.
   */
  retention: z
    .union([
      z.literal(false),
      z.object({
        inboxWindowMs: keepMs.default(DEFAULT_RETENTION.inboxWindowMs),
        settledDeadLettersMs: keepMs.default(DEFAULT_RETENTION.settledDeadLettersMs),
        intervalMs: z.number().int().min(10).default(DEFAULT_RETENTION.intervalMs),
        batchSize: z.number().int().min(1).max(100_000).default(DEFAULT_RETENTION.batchSize),
      }),
    ])
    .default(DEFAULT_RETENTION),
});

export interface ConsumerOptions extends z.input<typeof schema> {
  store: ConsumerStore;
  transport: Subscriber;
  clock?: Clock;
  /** Default: JSON lines on stderr at SURETY_LOG_LEVEL (default info); `null` logs nothing. */
  logger?: Logger | null;
  /** Alert hook: a dead letter went dead (permanent error, poison, or retry limit reached). */
  onDead?: (dead: DeadLetterAlert) => void;
  /** prom-client Registry to register metrics in; a private one (consumer.metricsRegistry) by default. */
  registry?: import('prom-client').Registry;
}

export interface DeadLetterAlert {
  readonly messageId: string;
  readonly group: string;
  readonly attempts: number;
  readonly error: string;
}

export type RetryEngine =
  | { readonly kind: 'dead-letter-table'; readonly scheduleMs: readonly number[]; readonly maxAttempts: number }
  | { readonly kind: 'broker' };

export interface ResolvedConsumerOptions {
  readonly group: string;
  readonly topics: readonly string[] | undefined;
  readonly prefetch: number;
  readonly batchSize: number;
  readonly batchWindowMs: number;
  readonly parallelism: number;
  readonly handlerConcurrency: number;
  readonly perKeySerial: boolean;
  readonly retry: RetryEngine;
  readonly unavailableBackoffMs: readonly number[];
  readonly instanceId: string;
  /** False when nothing is ever purged. */
  readonly retention: false | ConsumerRetentionOptions;
  readonly store: ConsumerStore;
  readonly transport: Subscriber;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onDead: ConsumerOptions['onDead'];
}

export function resolveConsumerOptions(options: ConsumerOptions): ResolvedConsumerOptions {
  const { store, transport, clock, onDead, registry: _registry, ...rest } = options;
  if (!store) throw new InvalidOptionError('consumer.store', 'is required (a Surety store)');
  if (!transport) throw new InvalidOptionError('consumer.transport', 'is required (a Subscriber)');
  const o = parseOptions(schema, rest, 'consumer');
  if (o.deadLetters && o.brokerRetry) {
    throw new InvalidOptionError(
      'consumer.brokerRetry',
      'cannot be combined with "deadLetters": choose one retry engine. Two engines fight: broker redeliveries arrive at once and bypass the dead-letter backoff, and each failure is retried twice.',
    );
  }
  const retry: RetryEngine = o.brokerRetry
    ? { kind: 'broker' }
    : {
        kind: 'dead-letter-table',
        scheduleMs: o.deadLetters?.scheduleMs ?? [...DEFAULT_RETRY_SCHEDULE_MS],
        maxAttempts: o.deadLetters?.maxAttempts ?? 12,
      };
  return Object.freeze({
    group: o.group,
    topics: o.topics,
    prefetch: o.prefetch,
    batchSize: o.batchSize,
    batchWindowMs: o.batchWindowMs,
    parallelism: o.parallelism,
    handlerConcurrency: o.handlerConcurrency,
    perKeySerial: o.perKeySerial,
    retry,
    unavailableBackoffMs: o.unavailableBackoffMs,
    retention: purgesAnything(o.retention) ? o.retention : false,
    instanceId: o.instanceId ?? `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`,
    store,
    transport,
    clock: clock ?? systemClock,
    logger: o.logger,
    onDead,
  });
}

function purgesAnything(r: false | ConsumerRetentionOptions): r is ConsumerRetentionOptions {
  return r !== false && (r.inboxWindowMs > 0 || r.settledDeadLettersMs > 0);
}

/** The retry decision after `attempts` failures under the dead-letter table engine. */
export function decideRetry(retry: Extract<RetryEngine, { kind: 'dead-letter-table' }>, attempts: number, now: number) {
  if (attempts >= retry.maxAttempts) return { status: 'dead' as const, nextRetryAt: null };
  const delay = retry.scheduleMs[Math.min(attempts - 1, retry.scheduleMs.length - 1)]!;
  return { status: 'pending' as const, nextRetryAt: now + delay };
}
