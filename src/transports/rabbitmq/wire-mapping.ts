import { CONTENT_TYPE, WIRE_HEADERS, type WireMessage } from '../../core/wire.js';
import type { AmqpMessage, AmqpPublishOptions } from './driver.js';

const PERSISTENT = 2;

/** AMQP properties of a wire message: persistent, mandatory, native id, type and timestamp. */
export function toPublishOptions(message: WireMessage): AmqpPublishOptions {
  const createdAt = message.headers[WIRE_HEADERS.createdAt];
  const createdMs = createdAt === undefined ? Number.NaN : Date.parse(createdAt);
  return {
    // mandatory makes the broker return an unroutable message instead of silently dropping it.
    mandatory: true,
    deliveryMode: PERSISTENT,
    contentType: CONTENT_TYPE,
    messageId: message.id,
    type: message.headers[WIRE_HEADERS.type],
    // AMQP timestamps are whole seconds; prefer when the event happened over when it was relayed.
    timestamp: Math.floor((Number.isNaN(createdMs) ? Date.now() : createdMs) / 1000),
    headers: message.headers,
  };
}

/** The wire message of a delivery. Only text header values are kept (broker-added tables are not). */
export function fromAmqpMessage(msg: AmqpMessage): WireMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(msg.properties.headers ?? {})) {
    if (typeof value === 'string') headers[name] = value;
    else if (Buffer.isBuffer(value)) headers[name] = value.toString('utf8');
  }
  const id = msg.properties.messageId;
  return { id: typeof id === 'string' ? id : '', headers, body: msg.content };
}

/**
 * Previous deliveries of a message. Quorum queues count them exactly in `x-delivery-count`;
 * classic queues only say whether the message was delivered before.
 */
export function redeliveriesOf(msg: AmqpMessage): number {
  const count = msg.properties.headers?.['x-delivery-count'];
  if (typeof count === 'number' && Number.isFinite(count) && count >= 0) return count;
  if (typeof count === 'bigint' && count >= 0n) return Number(count);
  return msg.fields.redelivered ? 1 : 0;
}
