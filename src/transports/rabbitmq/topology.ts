import { z } from 'zod';
import {
  booleanOption,
  integerIn,
  listOf,
  nonEmptyString,
  oneOf,
  recordOption,
  stringOption,
} from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import {
  MAX_PARKED_QUEUE_NAME_BYTES,
  DEAD_LETTER_EXCHANGE,
  parkingArguments,
  parkingQueueArguments,
  parkingQueueName,
} from './dead-letter-parking.js';
import { declarationRefusal } from './declare-refusal.js';
import type { AmqpTopologyChannel } from './driver.js';

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
  /**
   * Quorum only: dead-letter what the queue gives up on (past its delivery limit) into
   * `<name>.dead-letters`, which the subscription drains into the consumer's dead-letter table.
   * Default: the topology's `deadLetterParking`; always off with a dead-letter exchange of its own.
   */
  readonly deadLetterParking?: boolean;
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
  /**
   * Default true: every quorum queue Surety declares without a dead-letter exchange of its own
   * (those in `queues`, and the group queues subscriptions declare) dead-letters, at least once,
   * through the exchange `surety.dead-letters` into `<queue>.dead-letters`, which the subscription
   * drains into the consumer's dead-letter table. Without a dead-letter exchange a quorum queue
   * drops a message past its delivery limit (RabbitMQ 4: 20 by default). Set false only when you
   * dead-letter the queues yourself, e.g. by a policy.
   */
  readonly deadLetterParking?: boolean;
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
  /** Where the queue parks what it gives up on; null without dead-letter parking. */
  readonly parkingQueue: string | null;
}

export interface ResolvedTopology {
  readonly exchanges: readonly ResolvedExchange[];
  readonly queues: readonly ResolvedQueue[];
  readonly bindings: readonly BindingSpec[];
  /** Whether queues declared outside `queues` (a group's own queue) get dead-letter parking. */
  readonly deadLetterParking: boolean;
}

const EXCHANGE_TYPES = ['topic', 'direct', 'fanout', 'headers'] as const;
const QUEUE_TYPES = ['quorum', 'classic'] as const;
const OVERFLOWS = ['reject-publish', 'drop-head', 'reject-publish-dlx'] as const;

const exchangeSchema = z
  .object(
    {
      name: nonEmptyString(),
      type: oneOf(EXCHANGE_TYPES).default('topic'),
      durable: booleanOption().default(true),
    },
    { error: 'must be an object' },
  )
  .transform((e): ResolvedExchange => Object.freeze(e));

const queueSpecSchema = z.object(
  {
    name: nonEmptyString(),
    type: oneOf(QUEUE_TYPES).default('quorum'),
    durable: booleanOption().default(true),
    deadLetterExchange: stringOption().optional(),
    deadLetterRoutingKey: stringOption().optional(),
    deliveryLimit: integerIn(0).optional(),
    maxLength: integerIn(0).optional(),
    overflow: oneOf(OVERFLOWS).optional(),
    singleActiveConsumer: booleanOption().default(false),
    arguments: recordOption().optional(),
    deadLetterParking: booleanOption().optional(),
  },
  { error: 'must be an object' },
);

type QueueSpecInput = z.output<typeof queueSpecSchema>;

const bindingSchema = z
  .object(
    { exchange: nonEmptyString(), queue: nonEmptyString(), pattern: stringOption().default('') },
    { error: 'must be an object' },
  )
  .transform((b): BindingSpec => Object.freeze(b));

/** A topology, validated into its frozen, declarable form (see {@link Topology}). */
export const topologySchema = z
  .object(
    {
      deadLetterParking: booleanOption().default(true),
      exchanges: listOf(exchangeSchema).default([]),
      queues: listOf(queueSpecSchema).default([]),
      bindings: listOf(bindingSchema).default([]),
    },
    { error: 'must be an object' },
  )
  .transform((t, ctx): ResolvedTopology => {
    const queues: ResolvedQueue[] = [];
    for (const [i, spec] of t.queues.entries()) {
      const queue = settleQueue(spec, t.deadLetterParking);
      if ('problem' in queue) {
        ctx.addIssue({ code: 'custom', path: ['queues', i, queue.option], message: queue.problem });
        return z.NEVER;
      }
      queues.push(queue);
    }
    return Object.freeze({
      exchanges: Object.freeze(t.exchanges),
      queues: Object.freeze(queues),
      bindings: Object.freeze(t.bindings),
      deadLetterParking: t.deadLetterParking,
    });
  });

/**
 * A group's own queue, declared by a subscription: `name` as `queueForGroup` returned it, quorum
 * and durable, parked unless the topology opts out (`parkingDefault`).
 */
export function resolveGroupQueue(name: string, parkingDefault: boolean): ResolvedQueue {
  const schema = queueSpecSchema.transform((spec, ctx) => {
    const queue = settleQueue(spec, parkingDefault);
    if (!('problem' in queue)) return queue;
    ctx.addIssue({ code: 'custom', path: [queue.option], message: queue.problem });
    return z.NEVER;
  });
  return parseOptions(schema, { name }, 'queueForGroup');
}

/** The queue's declarable form, or which of its options is wrong with the others and why. */
function settleQueue(
  spec: QueueSpecInput,
  parkingDefault: boolean,
): ResolvedQueue | { option: string; problem: string } {
  const { name, type, durable, deliveryLimit, overflow } = spec;
  // RabbitMQ would refuse these with a channel error at declare time; say so at build time instead.
  if (type === 'quorum' && !durable) return { option: 'durable', problem: 'must be true for a quorum queue' };
  if (type === 'classic' && deliveryLimit !== undefined)
    return { option: 'deliveryLimit', problem: 'is only supported by type "quorum"' };
  if (type === 'quorum' && overflow === 'reject-publish-dlx')
    return { option: 'overflow', problem: 'must be "reject-publish" or "drop-head" for a quorum queue' };
  const named: Record<string, unknown> = { 'x-queue-type': type };
  if (spec.deadLetterExchange !== undefined) named['x-dead-letter-exchange'] = spec.deadLetterExchange;
  if (spec.deadLetterRoutingKey !== undefined) named['x-dead-letter-routing-key'] = spec.deadLetterRoutingKey;
  if (deliveryLimit !== undefined) named['x-delivery-limit'] = deliveryLimit;
  if (spec.maxLength !== undefined) named['x-max-length'] = spec.maxLength;
  if (overflow !== undefined) named['x-overflow'] = overflow;
  // Only when on: a queue declared without the argument must stay equivalent to one with `false`.
  if (spec.singleActiveConsumer) named['x-single-active-consumer'] = true;
  const args = { ...spec.arguments, ...named };
  const ownExchange = args['x-dead-letter-exchange'] !== undefined;
  if (spec.deadLetterParking === true && type !== 'quorum')
    return { option: 'deadLetterParking', problem: 'is only supported by type "quorum"' };
  if (spec.deadLetterParking === true && ownExchange) {
    return {
      option: 'deadLetterParking',
      problem: 'cannot be true for a queue with a dead-letter exchange of its own: its dead letters go there',
    };
  }
  const parks = type === 'quorum' && !ownExchange && (spec.deadLetterParking ?? parkingDefault);
  if (!parks) return Object.freeze({ name, durable, arguments: Object.freeze(args), parkingQueue: null });
  if (args['x-overflow'] !== undefined && args['x-overflow'] !== 'reject-publish') {
    return {
      option: 'overflow',
      problem:
        'must be "reject-publish" with dead-letter parking (at-least-once dead-lettering needs it); set deadLetterParking: false to drop the oldest message of a full queue instead',
    };
  }
  if (args['x-dead-letter-routing-key'] !== undefined) {
    return {
      option: 'deadLetterRoutingKey',
      problem: 'needs "deadLetterExchange": with dead-letter parking the routing key is the queue name',
    };
  }
  if (Buffer.byteLength(name) > MAX_PARKED_QUEUE_NAME_BYTES) {
    return {
      option: 'name',
      problem: `must be at most ${MAX_PARKED_QUEUE_NAME_BYTES} bytes with dead-letter parking (its parking queue adds ".dead-letters")`,
    };
  }
  return Object.freeze({
    name,
    durable,
    arguments: Object.freeze({ ...args, ...parkingArguments(name) }),
    parkingQueue: parkingQueueName(name),
  });
}

/**
 * Declares exchanges, then queues (with their parking queues, see `Topology.deadLetterParking`),
 * then bindings. Declarations are idempotent; a queue that exists with other arguments makes the
 * broker refuse it and close the channel, and this reject with QueueDeclarationRefusedError.
 *
 * @example
 * ```ts
 * const channel = await connection.createChannel();
 * await declareTopology(channel, {
 *   exchanges: [{ name: 'orders', type: 'topic' }],
 *   // Past 5 deliveries a message is parked in billing.dead-letters, for the consumer's dead-letter table.
 *   queues: [{ name: 'billing', deliveryLimit: 5 }],
 *   bindings: [{ exchange: 'orders', queue: 'billing', pattern: 'order.*' }],
 * });
 * ```
 */
export async function declareTopology(channel: AmqpTopologyChannel, topology: Topology): Promise<void> {
  await declareResolvedTopology(channel, parseOptions(topologySchema, topology, 'topology'));
}

export async function declareResolvedTopology(channel: AmqpTopologyChannel, topology: ResolvedTopology): Promise<void> {
  for (const e of topology.exchanges) await channel.assertExchange(e.name, e.type, { durable: e.durable });
  await declareQueues(channel, topology.queues);
  for (const b of topology.bindings) await channel.bindQueue(b.queue, b.exchange, b.pattern);
}

/**
 * Declares queues, each parked one after its parking queue and that queue's binding, so that its
 * dead letters are routable from the start. A refusal rejects with QueueDeclarationRefusedError.
 */
export async function declareQueues(channel: AmqpTopologyChannel, queues: readonly ResolvedQueue[]): Promise<void> {
  if (queues.some((q) => q.parkingQueue !== null))
    await channel.assertExchange(DEAD_LETTER_EXCHANGE, 'direct', { durable: true });
  for (const q of queues) {
    if (q.parkingQueue !== null) {
      await assertQueue(channel, q.parkingQueue, { durable: true, arguments: parkingQueueArguments() });
      await channel.bindQueue(q.parkingQueue, DEAD_LETTER_EXCHANGE, q.name);
    }
    await assertQueue(channel, q.name, { durable: q.durable, arguments: q.arguments });
  }
}

async function assertQueue(
  channel: AmqpTopologyChannel,
  name: string,
  options: Record<string, unknown>,
): Promise<void> {
  try {
    await channel.assertQueue(name, options);
  } catch (err) {
    throw declarationRefusal(err, name);
  }
}
