import { InvalidOptionError } from '../../core/errors.js';
import {
  DEAD_LETTER_EXCHANGE,
  MAX_PARKED_QUEUE_NAME_BYTES,
  parkingArguments,
  parkingQueueArguments,
  parkingQueueName,
} from './dead-letter-parking.js';
import { declarationRefusal } from './declare-refusal.js';
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

/** Validates a topology into its frozen, declarable form. `option` prefixes error names. */
export function resolveTopology(input: Topology | undefined, option = 'topology'): ResolvedTopology {
  const raw = optionalRecord(input, option) ?? {};
  const deadLetterParking = optionalBoolean(raw.deadLetterParking, `${option}.deadLetterParking`, true);
  const exchanges = optionalArray(raw.exchanges, `${option}.exchanges`).map((e, i) =>
    resolveExchange(e, `${option}.exchanges[${i}]`),
  );
  const queues = optionalArray(raw.queues, `${option}.queues`).map((q, i) =>
    resolveQueue(q, `${option}.queues[${i}]`, deadLetterParking),
  );
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
    deadLetterParking,
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

/**
 * Validates one queue spec into its declarable form; `at` prefixes error names, and
 * `parkingDefault` is the topology's `deadLetterParking`.
 */
export function resolveQueue(input: unknown, at: string, parkingDefault: boolean): ResolvedQueue {
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
  const args = { ...extra, ...named };
  const parks = parksDeadLetters(spec, at, type, args, parkingDefault);
  if (!parks) return Object.freeze({ name, durable, arguments: Object.freeze(args), parkingQueue: null });
  if (args['x-overflow'] !== undefined && args['x-overflow'] !== 'reject-publish') {
    throw new InvalidOptionError(
      `${at}.overflow`,
      'must be "reject-publish" with dead-letter parking (at-least-once dead-lettering needs it); set deadLetterParking: false to drop the oldest message of a full queue instead',
    );
  }
  if (args['x-dead-letter-routing-key'] !== undefined) {
    throw new InvalidOptionError(
      `${at}.deadLetterRoutingKey`,
      'needs "deadLetterExchange": with dead-letter parking the routing key is the queue name',
    );
  }
  if (Buffer.byteLength(name) > MAX_PARKED_QUEUE_NAME_BYTES) {
    throw new InvalidOptionError(
      `${at}.name`,
      `must be at most ${MAX_PARKED_QUEUE_NAME_BYTES} bytes with dead-letter parking (its parking queue adds ".dead-letters")`,
    );
  }
  return Object.freeze({
    name,
    durable,
    arguments: Object.freeze({ ...args, ...parkingArguments(name) }),
    parkingQueue: parkingQueueName(name),
  });
}

/** Whether a queue gets Surety's dead-letter parking: quorum, no dead-letter exchange of its own, not opted out. */
function parksDeadLetters(
  spec: Readonly<Record<string, unknown>>,
  at: string,
  type: QueueType,
  args: Readonly<Record<string, unknown>>,
  parkingDefault: boolean,
): boolean {
  const explicit =
    spec.deadLetterParking === undefined
      ? undefined
      : optionalBoolean(spec.deadLetterParking, `${at}.deadLetterParking`, true);
  const ownExchange = args['x-dead-letter-exchange'] !== undefined;
  if (explicit === true && type !== 'quorum')
    throw new InvalidOptionError(`${at}.deadLetterParking`, 'is only supported by type "quorum"');
  if (explicit === true && ownExchange) {
    throw new InvalidOptionError(
      `${at}.deadLetterParking`,
      'cannot be true for a queue with a dead-letter exchange of its own: its dead letters go there',
    );
  }
  return type === 'quorum' && !ownExchange && (explicit ?? parkingDefault);
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
  await declareResolvedTopology(channel, resolveTopology(topology));
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
