import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { backoffSchema, createBackoff, type Backoff } from '../core/backoff.js';
import { systemClock, type Clock } from '../core/clock.js';
import { parseOptions } from '../core/options.js';
import type { OutboxRow, OutboxRelayStore } from '../ports/outbox-store.js';
import type { HeartbeatStore } from './relay-heartbeat.js';
import type { Publisher } from '../ports/transport.js';
import type { Logger } from '../core/logger.js';
import type { Outbox } from './outbox.js';

const ms = (min: number, max: number) => z.number().int().min(min).max(max);

const schema = z.object({
  relayId: z.string().min(1).max(64).optional(),
  batchSize: ms(1, 10_000).default(500),
  maxInFlight: ms(1, 100_000).default(2_000),
  leaseMs: ms(100, 3_600_000).default(60_000),
  pollIntervalMs: ms(1, 600_000).default(1_000),
  maxAttempts: ms(1, 1_000).default(12),
  ordered: z.boolean().default(false),
  markSentBatchSize: ms(1, 10_000).default(1_000),
  listen: z.boolean().default(true),
  /**
   * Where the store offers it (PostgreSQL), claim rows as row locks of an open transaction instead of
   * writing a lease: half the row writes per message. Each batch in flight holds one connection.
   */
  lockedClaims: z.boolean().default(true),
  /** With locked claims: batches (so pool connections) in flight at once, besides the one claiming. */
  maxLockedBatches: ms(1, 64).default(4),
  backoff: backoffSchema.default({}),
  retention: z
    .union([
      z.literal(false),
      z.object({
        sentMaxAgeMs: ms(0, 10 * 365 * 86_400_000).default(7 * 86_400_000),
        intervalMs: ms(10, 86_400_000).default(60_000),
        batchSize: ms(1, 100_000).default(1_000),
      }),
    ])
    .default({ sentMaxAgeMs: 7 * 86_400_000, intervalMs: 60_000, batchSize: 1_000 }),
  shutdownTimeoutMs: ms(0, 600_000).default(15_000),
  /** How often a started relay writes its heartbeat row, where the store keeps them (the admin tables). */
  heartbeatMs: ms(100, 600_000).default(5_000),
});

/** What a relay uses of a store. */
export interface RelayStore {
  readonly outbox: OutboxRelayStore;
  readonly heartbeats?: HeartbeatStore;
}

export interface RelayOptions extends z.input<typeof schema> {
  /** The store (its `outbox` concern, and its `heartbeats` where it keeps them). */
  store: RelayStore;
  publisher: Publisher;
  /** In-process outbox: its `transaction()` and `committed()` wake this relay at once. */
  outbox?: Outbox;
  clock?: Clock;
  /** Default: JSON lines on stderr at SURETY_LOG_LEVEL (default info); `null` logs nothing. */
  logger?: Logger | null;
  /** Called once when a row goes dead (after the last attempt). Errors it throws are logged. */
  onDead?: (row: OutboxRow, error: unknown) => void | Promise<void>;
  /**
   * Called after a row's publish was confirmed by the broker (before it is marked sent). Not awaited;
   * errors it throws, or rejections of the promise it returns, are logged.
   */
  onConfirmed?: (row: OutboxRow) => void;
  /** prom-client Registry to register metrics in; a private one (relay.registry) by default. */
  registry?: import('prom-client').Registry;
}

export interface ResolvedRelayOptions extends Readonly<Omit<z.output<typeof schema>, 'relayId' | 'backoff'>> {
  readonly relayId: string;
  readonly backoff: Backoff;
  /** The store's outbox concern. */
  readonly store: OutboxRelayStore;
  /** The store's heartbeats concern, if it has one. */
  readonly heartbeats: HeartbeatStore | undefined;
  readonly publisher: Publisher;
  readonly outbox: Outbox | undefined;
  readonly clock: Clock;
  readonly onDead: RelayOptions['onDead'];
  readonly onConfirmed: RelayOptions['onConfirmed'];
}

export function resolveRelayOptions(options: RelayOptions): ResolvedRelayOptions {
  const {
    store,
    publisher,
    outbox,
    clock,
    logger: _logger,
    onDead,
    onConfirmed,
    registry: _registry,
    ...rest
  } = options;
  if (!store?.outbox) throw new TypeError('relay: "store" is required (a Surety store, with its outbox)');
  if (!publisher) throw new TypeError('relay: "publisher" is required');
  const o = parseOptions(schema, rest, 'relay');
  const backoff = createBackoff(o.backoff, 'relay.backoff');
  return Object.freeze({
    ...o,
    relayId: o.relayId ?? `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`,
    backoff,
    store: store.outbox,
    heartbeats: store.heartbeats,
    publisher,
    outbox,
    clock: clock ?? systemClock,
    onDead,
    onConfirmed,
  });
}
