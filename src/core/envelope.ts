import { v7 as uuidv7 } from 'uuid';
import { InvalidMessageError } from './errors.js';

/** W3C trace context carried with a message. */
export interface TraceContext {
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/**
 * The one message shape Surety moves. `id` is a UUIDv7 (time-ordered) and travels as the broker's
 * native message id, so every consumer can deduplicate on it.
 */
export interface Envelope<P = unknown> {
  readonly id: string;
  /** What happened, e.g. `order.created` (the seeds' biz_type). */
  readonly type: string;
  /**
   * The deduplication key, e.g. an order id (the seeds' biz_id): (type, key) is unique in the outbox,
   * so a second add with the same type and key is a duplicate and writes nothing. Not an ordering key.
   */
  readonly key: string;
  /**
   * Messages with the same ordering key keep their commit order (ordered outbox and relay) and are
   * applied one after another, in that order, by a consumer with `perKeySerial`. The producer's
   * `orderingKey`, else `key` (also for messages from producers that did not send one).
   */
  readonly orderingKey: string;
  /** Schema version of `payload` for this `type`. */
  readonly version: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: P;
  readonly createdAt: Date;
  readonly trace: TraceContext;
}

/** What a caller gives to `outbox.add`. */
export interface MessageInput<P = unknown> {
  type: string;
  /**
   * Deduplication key: (type, key) is unique in the outbox, so a second add with the same type and
   * key is a duplicate (`duplicate: true`) and writes nothing. Give it to make a business event
   * idempotent (e.g. `key: orderId` for `order.created`); defaults to the message id (no
   * deduplication). For per-entity order use `orderingKey`, not this.
   */
  key?: string;
  payload: P;
  version?: number;
  headers?: Record<string, string>;
  trace?: TraceContext;
  /** Destination topic / routing key; defaults to `type`. */
  topic?: string;
  /**
   * The entity whose messages keep their order, e.g. an account id: an ordered outbox and relay
   * publish them in commit order, and consumers apply them one after another in that order. Many
   * messages share it (unlike `key`). Required by an ordered outbox; otherwise it defaults to `key`.
   * Travels in the `surety-ordering-key` header.
   * @example
   * await outbox.add(tx, { type: 'account.credited', orderingKey: accountId, payload: { amount } });
   */
  orderingKey?: string;
  /** Supply an id (a UUID) instead of a generated UUIDv7. */
  id?: string;
}

export const RESERVED_HEADER_PREFIX = 'surety-';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:\-/]{0,199}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_KEY = 200;

export function newMessageId(): string {
  return uuidv7();
}

export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Validates input and builds a frozen envelope. Throws {@link InvalidMessageError} naming the field. */
export function createEnvelope<P>(input: MessageInput<P>, now: Date = new Date()): Envelope<P> {
  return buildEnvelope(input, now).envelope;
}

/** {@link createEnvelope}, also returning the payload's JSON text, so a writer need not serialise it again. */
export function buildEnvelope<P>(
  input: MessageInput<P>,
  now: Date = new Date(),
): { envelope: Envelope<P>; payloadJson: string } {
  if (input === null || typeof input !== 'object') throw new InvalidMessageError('message', 'must be an object');
  if (typeof input.type !== 'string' || !NAME.test(input.type)) {
    throw new InvalidMessageError('type', 'must be 1-200 characters of letters, digits and . _ : - /');
  }
  const id = input.id ?? newMessageId();
  if (!isMessageId(id)) throw new InvalidMessageError('id', 'must be a UUID');
  const key = input.key ?? id;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY) {
    throw new InvalidMessageError('key', `must be a non-empty string of at most ${MAX_KEY} characters`);
  }
  const orderingKey = input.orderingKey ?? key;
  if (typeof orderingKey !== 'string' || orderingKey.length === 0 || orderingKey.length > MAX_KEY) {
    throw new InvalidMessageError('orderingKey', `must be a non-empty string of at most ${MAX_KEY} characters`);
  }
  const version = input.version ?? 1;
  if (!Number.isInteger(version) || version < 1) throw new InvalidMessageError('version', 'must be an integer >= 1');
  const headers = { ...(input.headers ?? {}) };
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new InvalidMessageError(`headers.${name}`, 'must be a string');
    if (name.toLowerCase().startsWith(RESERVED_HEADER_PREFIX)) {
      throw new InvalidMessageError(`headers.${name}`, `the prefix "${RESERVED_HEADER_PREFIX}" is reserved`);
    }
  }
  if (input.payload === undefined) throw new InvalidMessageError('payload', 'is required (use null for none)');
  // Round-trip now so that a payload JSON cannot represent fails at add time, not in the relay.
  let payloadJson: string;
  try {
    payloadJson = JSON.stringify(input.payload);
  } catch (err) {
    throw new InvalidMessageError('payload', `must be JSON-serialisable (${(err as Error).message})`);
  }
  const trace: TraceContext = {
    ...(input.trace?.traceparent ? { traceparent: input.trace.traceparent } : {}),
    ...(input.trace?.tracestate ? { tracestate: input.trace.tracestate } : {}),
  };
  const envelope = Object.freeze({
    id,
    type: input.type,
    key,
    orderingKey,
    version,
    headers: Object.freeze(headers),
    payload: JSON.parse(payloadJson) as P,
    createdAt: now,
    trace: Object.freeze(trace),
  });
  return { envelope, payloadJson };
}
