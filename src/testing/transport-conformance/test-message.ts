import { newMessageId } from '../../core/envelope.js';
import { WIRE_HEADERS, type WireMessage } from '../../core/wire.js';

/**
 * A test message: unique id, headers with non-ASCII text, a body with bytes that are not UTF-8.
 * With `orderingKey`, it carries the header transports take their partition or ordering key from.
 */
export function testMessage(label: string, orderingKey?: string): WireMessage {
  const headers: Record<string, string> = { 'x-label': label, 'x-text': 'héllo ✓ "quoted"' };
  if (orderingKey !== undefined) headers[WIRE_HEADERS.orderingKey] = orderingKey;
  return {
    id: newMessageId(),
    headers,
    body: Buffer.concat([Buffer.from(JSON.stringify({ label })), Buffer.from([0x00, 0xff, 0xfe, 0x0a])]),
  };
}
