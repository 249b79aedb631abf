import { wireOrderingKey, type WireMessage } from '../../core/wire.js';
import type { KafkaRecordIn, KafkaRecordOut } from './driver.js';

/** Kafka records have no native message id: it travels in this header (docs/wire-format.md). */
export const ID_HEADER = 'surety-id';

/** The record of a wire message: id and headers as Kafka headers, the ordering key as the Kafka key. */
export function toRecord(topic: string, message: WireMessage): KafkaRecordOut {
  const headers = new Map<Buffer, Buffer>([[Buffer.from(ID_HEADER), Buffer.from(message.id)]]);
  for (const [name, value] of Object.entries(message.headers)) headers.set(Buffer.from(name), Buffer.from(value));
  const key = wireOrderingKey(message.headers);
  return { topic, value: message.body, headers, ...(key === undefined ? {} : { key: Buffer.from(key) }) };
}

/** The wire message of a record; the id header is taken out of the headers again. */
export function fromRecord(record: KafkaRecordIn): WireMessage {
  const headers: Record<string, string> = {};
  let id = '';
  for (const [name, value] of record.headers) {
    const text = value === null || value === undefined ? '' : value.toString('utf8');
    if (name.toString('utf8') === ID_HEADER) id = text;
    else headers[name.toString('utf8')] = text;
  }
  return { id, headers, body: record.value ?? Buffer.alloc(0) };
}
