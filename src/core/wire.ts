import { isMessageId, type Envelope, type TraceContext } from './envelope.js';
import { PoisonMessageError } from './errors.js';

/**
 * Broker-neutral wire form (documented in docs/wire-format.md): the JSON payload is the body, the
 * rest travels in headers. Transports map `id` to their native message id.
 */
export interface WireMessage {
  readonly id: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export const WIRE_HEADERS = {
  type: 'surety-type',
  key: 'surety-key',
  orderingKey: 'surety-ordering-key',
  version: 'surety-version',
  createdAt: 'surety-created-at',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;

export const CONTENT_TYPE = 'application/json';

/** Encodes an envelope into its wire form. */
export function encodeEnvelope(envelope: Envelope): WireMessage {
  return encodeWire(envelope, Buffer.from(JSON.stringify(envelope.payload)));
}

/** Encodes envelope metadata around a body that is already JSON text (the outbox stores it so). */
export function encodeWire(meta: Omit<Envelope, 'payload'>, body: Buffer): WireMessage {
  const headers: Record<string, string> = {
    ...meta.headers,
    [WIRE_HEADERS.type]: meta.type,
    [WIRE_HEADERS.key]: meta.key,
    [WIRE_HEADERS.orderingKey]: meta.orderingKey,
    [WIRE_HEADERS.version]: String(meta.version),
    [WIRE_HEADERS.createdAt]: meta.createdAt.toISOString(),
  };
  if (meta.trace.traceparent) headers[WIRE_HEADERS.traceparent] = meta.trace.traceparent;
  if (meta.trace.tracestate) headers[WIRE_HEADERS.tracestate] = meta.trace.tracestate;
  return { id: meta.id, headers, body };
}

/** Decodes a wire message. Throws {@link PoisonMessageError} saying exactly what is wrong. */
export function decodeEnvelope(wire: { id: unknown; headers: Record<string, unknown>; body: Buffer }): Envelope {
  if (!isMessageId(wire.id)) throw new PoisonMessageError(`message id ${JSON.stringify(wire.id)} is not a UUID`);
  const h = wire.headers;
  const text = (name: string): string => {
    const v = headerText(h[name]);
    if (v !== undefined) return v;
    throw new PoisonMessageError(`header "${name}" is missing or not a string`);
  };
  const type = text(WIRE_HEADERS.type);
  const key = text(WIRE_HEADERS.key);
  // Producers before the header existed sent none: their order was the business key's.
  const orderingKey = h[WIRE_HEADERS.orderingKey] === undefined ? key : text(WIRE_HEADERS.orderingKey);
  const version = Number(text(WIRE_HEADERS.version));
  if (!Number.isInteger(version) || version < 1)
    throw new PoisonMessageError(`header "${WIRE_HEADERS.version}" is not an integer >= 1`);
  const createdAt = new Date(text(WIRE_HEADERS.createdAt));
  if (Number.isNaN(createdAt.getTime()))
    throw new PoisonMessageError(`header "${WIRE_HEADERS.createdAt}" is not an ISO time`);
  let payload: unknown;
  try {
    payload = JSON.parse(wire.body.toString('utf8'));
  } catch (err) {
    throw new PoisonMessageError('body is not valid JSON', { cause: err });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (name.startsWith('surety-') || name === WIRE_HEADERS.traceparent || name === WIRE_HEADERS.tracestate) continue;
    if (typeof value === 'string') headers[name] = value;
  }
  const trace: TraceContext = {
    ...(typeof h[WIRE_HEADERS.traceparent] === 'string' ? { traceparent: h[WIRE_HEADERS.traceparent] as string } : {}),
    ...(typeof h[WIRE_HEADERS.tracestate] === 'string' ? { tracestate: h[WIRE_HEADERS.tracestate] as string } : {}),
  };
  return Object.freeze({ id: wire.id, type, key, orderingKey, version, headers, payload, createdAt, trace });
}

/**
 * The ordering key of a wire message, read as {@link decodeEnvelope} reads it (`surety-ordering-key`,
 * else `surety-key`), without decoding the rest; undefined when neither is usable.
 */
export function wireOrderingKey(headers: Readonly<Record<string, unknown>>): string | undefined {
  const given = headers[WIRE_HEADERS.orderingKey];
  return given === undefined ? headerText(headers[WIRE_HEADERS.key]) : headerText(given);
}

/** A header's text: a non-empty string, or a Buffer as UTF-8 (brokers may hand header values as bytes). */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string' && value.length > 0) return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
