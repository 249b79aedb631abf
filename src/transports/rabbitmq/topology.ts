import { InvalidOptionError } from '../../core/errors.js';
import type { AmqpTopologyChannel } from './driver.js';
import {
  nonEmptyString,
  oneOf,
  optionalArray,
  optionalBoolean,
  optionalInteger,
  optionalRecord,
  optionalString,
} from './validate.js';

export type ExchangeType = 'topic' | 'direct' | 'fanout' | 'headers';
export type QueueType = 'quorum' | 'classic';
export type QueueOverflow = 'reject-publish' | 'drop-head' | 'reject-publish-dlx';

export interface ExchangeSpec {
  readonly name: string;
  /** Default `topic`. */
  readonly type?: ExchangeType;
  /** Default true. */
  readonly durable?: boolean;
}

export interface QueueSpec {
  readonly name: string;
  /** Default `quorum`: replicated, and it counts redeliveries (`x-delivery-count`). */
  readonly type?: QueueType;
  /** Default true. Quorum queues are always durable. */
  readonly durable?: boolean;
  readonly deadLetterExchange?: string;
  readonly deadLetterRoutingKey?: string;
  /** Quorum only: dead-letter (or drop) a message once it was handed back this many times. */
  readonly deliveryLimit?: number;
  readonly maxLength?: number;
  readonly overflow?: QueueOverflow;
  /**
   * Default false. One consumer at a time receives from the queue (`x-single-active-consumer`); the
   * others wait and the broker hands over to one when it goes away (a crash included). Needed for
   * per-key order with several consumer processes on one queue, which otherwise round-robins.
   * Quorum and classic queues. The broker refuses to change it on an existing queue.
   */
  readonly singleActiveConsumer?: boolean;
  /** Further `x-` arguments; the named options above take precedence. */
  readonly arguments?: Readonly<Record<string, unknown>>;
}

export interface BindingSpec {
  readonly exchange: string;
  readonly queue: string;
  /** Routing key pattern, e.g. `order.*` on a topic exchange. */
  readonly pattern: string;
}

/** Exchanges, queues and bindings declared (idempotently) on every (re)connect. */
export interface Topology {
  readonly exchanges?: readonly ExchangeSpec[];
  readonly queues?: readonly QueueSpec[];
  readonly bindings?: readonly BindingSpec[];
}

export interface ResolvedExchange {
  readonly name: string;
  readonly type: ExchangeType;
  readonly durable: boolean;
}

export interface ResolvedQueue {
  readonly name: string;
  readonly durable: boolean;
  readonly arguments: Readonly<Record<string, unknown>>;
}

export interface ResolvedTopology {
  readonly exchanges: readonly ResolvedExchange[];
  readonly queues: readonly ResolvedQueue[];
  readonly bindings: readonly BindingSpec[];
}

const EXCHANGE_TYPES = ['topic', 'direct', 'fanout', 'headers'] as const;
const QUEUE_TYPES = ['quorum', 'classic'] as const;
const OVERFLOWS = ['reject-publish', 'drop-head', 'reject-publish-dlx'] as const;

/** Validates a topology into its frozen, declarable form. `option` prefixes error names. */
export function resolveTopology(input: Topology | undefined, option = 'topology'): ResolvedTopology {
  const raw = optionalRecord(input, option) ?? {};
  const exchanges = optionalArray(raw.exchanges, `${option}.exchanges`).map((e, i) =>
    resolveExchange(e, `${option}.exchanges[${i}]`),
  );
  const queues = optionalArray(raw.queues, `${option}.queues`).map((q, i) => resolveQueue(q, `${option}.queues[${i}]`));
  const bindings = optionalArray(raw.bindings, `${option}.bindings`).map((b, i) => {
    const at = `${option}.bindings[${i}]`;
    const spec = optionalRecord(b, at) ?? {};
    return Object.freeze({
      exchange: nonEmptyString(spec.exchange, `${at}.exchange`),
      queue: nonEmptyString(spec.queue, `${at}.queue`),
      pattern: optionalString(spec.pattern, `${at}.pattern`) ?? '',
    });
  });
  return Object.freeze({
    exchanges: Object.freeze(exchanges),
    queues: Object.freeze(queues),
    bindings: Object.freeze(bindings),
  });
}

function resolveExchange(input: unknown, at: string): ResolvedExchange {
  const spec = optionalRecord(input, at) ?? {};
  return Object.freeze({
    name: nonEmptyString(spec.name, `${at}.name`),
    type: oneOf(spec.type, `${at}.type`, EXCHANGE_TYPES, 'topic'),
    durable: optionalBoolean(spec.durable, `${at}.durable`, true),
  });
}

function resolveQueue(input: unknown, at: string): ResolvedQueue {
  const spec = optionalRecord(input, at) ?? {};
  const name = nonEmptyString(spec.name, `${at}.name`);
  const type = oneOf(spec.type, `${at}.type`, QUEUE_TYPES, 'quorum');
  const durable = optionalBoolean(spec.durable, `${at}.durable`, true);
  const deliveryLimit = optionalInteger(spec.deliveryLimit, `${at}.deliveryLimit`, 0);
  const overflow =
    spec.overflow === undefined ? undefined : oneOf(spec.overflow, `${at}.overflow`, OVERFLOWS, 'reject-publish');
  // RabbitMQ would refuse these with a channel error at declare time; say so at build time instead.
  if (type === 'quorum' && !durable) throw new InvalidOptionError(`${at}.durable`, 'must be true for a quorum queue');
  if (type === 'classic' && deliveryLimit !== undefined)
    throw new InvalidOptionError(`${at}.deliveryLimit`, 'is only supported by type "quorum"');
  if (type === 'quorum' && overflow === 'reject-publish-dlx') {
    throw new InvalidOptionError(`${at}.overflow`, 'must be "reject-publish" or "drop-head" for a quorum queue');
  }
  const named: Record<string, unknown> = { 'x-queue-type': type };
  const dlx = optionalString(spec.deadLetterExchange, `${at}.deadLetterExchange`);
  const dlrk = optionalString(spec.deadLetterRoutingKey, `${at}.deadLetterRoutingKey`);
  const maxLength = optionalInteger(spec.maxLength, `${at}.maxLength`, 0);
  const singleActive = optionalBoolean(spec.singleActiveConsumer, `${at}.singleActiveConsumer`, false);
  if (dlx !== undefined) named['x-dead-letter-exchange'] = dlx;
  if (dlrk !== undefined) named['x-dead-letter-routing-key'] = dlrk;
  if (deliveryLimit !== undefined) named['x-delivery-limit'] = deliveryLimit;
  if (maxLength !== undefined) named['x-max-length'] = maxLength;
  if (overflow !== undefined) named['x-overflow'] = overflow;
  // Only when on: a queue declared without the argument must stay equivalent to one with `false`.
  if (singleActive) named['x-single-active-consumer'] = true;
  const extra = optionalRecord(spec.arguments, `${at}.arguments`) ?? {};
  return Object.freeze({ name, durable, arguments: Object.freeze({ ...extra, ...named }) });
}

/**
 * Declares exchanges, then queues, then bindings. Declarations are idempotent; a declaration that
 * conflicts with what exists (e.g. other queue arguments) makes the broker close the channel.
 *
 * @example
 * ```ts
 * const channel = await connection.createChannel();
 * await declareTopology(channel, {
 *   exchanges: [{ name: 'orders', type: 'topic' }],
 *   queues: [{ name: 'billing', deliveryLimit: 5, deadLetterExchange: 'orders.dlx' }],
 *   bindings: [{ exchange: 'orders', queue: 'billing', pattern: 'order.*' }],
 * });
 * ```
 */
export async function declareTopology(channel: AmqpTopologyChannel, topology: Topology): Promise<void> {
  await declareResolvedTopology(channel, resolveTopology(topology));
}

export async function declareResolvedTopology(channel: AmqpTopologyChannel, topology: ResolvedTopology): Promise<void> {
  for (const e of topology.exchanges) await channel.assertExchange(e.name, e.type, { durable: e.durable });
  for (const q of topology.queues) await channel.assertQueue(q.name, { durable: q.durable, arguments: q.arguments });
  for (const b of topology.bindings) await channel.bindQueue(b.queue, b.exchange, b.pattern);
}
