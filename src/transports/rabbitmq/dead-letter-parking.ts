import type { DeliveryExhausted } from '../../ports/transport.js';
import type { AmqpMessage } from './driver.js';

/*
 * Dead-letter parking. A quorum queue gives up on a message past its delivery limit (RabbitMQ 4:
 * 20 unless told otherwise) and drops it unless it is dead-lettered. So every quorum queue Surety
 * declares without a dead-letter exchange of the user's dead-letters, at least once, into Surety's
 * exchange with its own name as routing key, and from there into its parking queue, which the
 * subscription drains into the consumer's dead-letter table.
 */

/** Durable direct exchange every parked queue dead-letters into, its own name as routing key. */
export const DEAD_LETTER_EXCHANGE = 'surety.dead-letters';

const PARKING_SUFFIX = '.dead-letters';
/** RabbitMQ's limit on queue names, in bytes. */
const MAX_QUEUE_NAME_BYTES = 255;
export const MAX_PARKED_QUEUE_NAME_BYTES = MAX_QUEUE_NAME_BYTES - Buffer.byteLength(PARKING_SUFFIX);

/**
 * The parking queue's own delivery limit. Its consumer never hands a message back; only a consumer
 * that dies holding one does, and RabbitMQ 4 would drop a message after 20 such returns. A million
 * is "never" on every version, and being the same argument on 3.x and 4.x keeps the redeclare
 * equivalent across a broker upgrade (-1, "unlimited" on 4.x, drops at once on 3.x).
 */
export const PARKING_QUEUE_DELIVERY_LIMIT = 1_000_000;

/**
 * `<queue>.dead-letters`: where `queue`'s dead letters wait for the consumer.
 * @example
 * parkingQueueName('billing'); // 'billing.dead-letters'
 */
export function parkingQueueName(queue: string): string {
  return `${queue}${PARKING_SUFFIX}`;
}

/**
 * The arguments that make `queue` dead-letter into its parking queue. At-least-once dead-lettering
 * keeps a message in the source queue until the parking queue confirms it, and needs
 * `reject-publish` overflow: a full queue then nacks publishers (the relay retries) instead of
 * dropping its oldest message.
 */
export function parkingArguments(queue: string): Record<string, unknown> {
  return {
    'x-dead-letter-exchange': DEAD_LETTER_EXCHANGE,
    'x-dead-letter-routing-key': queue,
    'x-dead-letter-strategy': 'at-least-once',
    'x-overflow': 'reject-publish',
  };
}

/** The parking queue's own arguments. */
export function parkingQueueArguments(): Record<string, unknown> {
  return { 'x-queue-type': 'quorum', 'x-delivery-limit': PARKING_QUEUE_DELIVERY_LIMIT };
}

/**
 * What a delivery from `source`'s parking queue says about why it left `source`, read from the
 * `x-death` entry the broker wrote for it, and the topic it was first published with (the
 * dead-letter routing key replaced it). `deliveryLimit` is the limit `source` was declared with.
 */
export function parkedDelivery(
  msg: AmqpMessage,
  source: string,
  deliveryLimit: number | null,
): { readonly exhausted: DeliveryExhausted; readonly topic: string } {
  const deaths = msg.properties.headers?.['x-death'];
  const death = Array.isArray(deaths)
    ? (deaths.find((d) => text((d as Record<string, unknown>)?.queue) === source) as Record<string, unknown>)
    : undefined;
  const headers = msg.properties.headers ?? {};
  const reason = text(death?.reason) ?? text(headers['x-first-death-reason']) ?? 'unknown';
  const keys = death?.['routing-keys'];
  const topic = (Array.isArray(keys) ? text(keys[0]) : undefined) ?? msg.fields.routingKey;
  // Past a limit of n the broker has delivered the message n + 1 times.
  const deliveries = reason === 'delivery_limit' && deliveryLimit !== null ? deliveryLimit + 1 : null;
  return { exhausted: Object.freeze({ reason, deliveries }), topic };
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
