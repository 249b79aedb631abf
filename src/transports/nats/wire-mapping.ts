import type { WireMessage } from '../../core/wire.js';
import type { MsgHdrs, NatsDriver } from './driver.js';

/** JetStream's deduplication header: the message id travels in it. */
export const MSG_ID_HEADER = 'Nats-Msg-Id';

/** NATS headers of a wire message (the id goes as `msgID`, which the client puts in Nats-Msg-Id). */
export function toNatsHeaders(driver: NatsDriver, message: WireMessage): MsgHdrs {
  const headers = driver.headers();
  for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
  return headers;
}

/**
 * The wire message of a received message. Never throws: a message whose headers cannot be read,
 * or that has no Nats-Msg-Id, comes out with what could be read (an empty id), so that the consumer
 * records it as a poison message instead of looping on it or dropping it.
 */
export function fromNatsMessage(read: { headers: () => MsgHdrs | undefined; data: Uint8Array }): WireMessage {
  const headers: Record<string, string> = {};
  let id = '';
  try {
    const h = read.headers();
    for (const name of h?.keys() ?? []) {
      const value = h!.get(name);
      if (name === MSG_ID_HEADER) id = value;
      else if (!name.startsWith('Nats-')) headers[name] = value;
    }
  } catch {
    // Unreadable headers: the envelope's headers are missing, and decoding says so.
  }
  return { id, headers, body: Buffer.from(read.data) };
}
