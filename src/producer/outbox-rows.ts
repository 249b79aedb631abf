import type { Envelope } from '../core/envelope.js';
import { encodeWire, type WireMessage } from '../core/wire.js';
import type { NewOutboxRow, OutboxRow } from '../ports/outbox-store.js';

/** The row `outbox.add` writes for an envelope. */
export function rowFromEnvelope(
  envelope: Envelope,
  topic: string,
  payloadJson = JSON.stringify(envelope.payload),
): NewOutboxRow {
  return {
    messageId: envelope.id,
    type: envelope.type,
    key: envelope.key,
    topic,
    orderingKey: envelope.orderingKey,
    version: envelope.version,
    headers: { ...envelope.headers },
    payload: payloadJson,
    traceparent: envelope.trace.traceparent ?? null,
    tracestate: envelope.trace.tracestate ?? null,
    createdAt: envelope.createdAt.getTime(),
  };
}

/** The wire form of a stored row; the payload text goes out byte for byte as stored. */
export function wireFromRow(row: OutboxRow): WireMessage {
  return encodeWire(
    {
      id: row.messageId,
      type: row.type,
      key: row.key,
      orderingKey: row.orderingKey,
      version: row.version,
      headers: row.headers,
      createdAt: new Date(row.createdAt),
      trace: {
        ...(row.traceparent ? { traceparent: row.traceparent } : {}),
        ...(row.tracestate ? { tracestate: row.tracestate } : {}),
      },
    },
    Buffer.from(row.payload, 'utf8'),
  );
}
