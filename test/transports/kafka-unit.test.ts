/** Pure logic of the Kafka transport: the per-partition commit position and the record mapping. */
import { describe, expect, it } from 'vitest';
import { PartitionCursor } from '../../src/transports/kafka/partition-cursor.js';
import { fromRecord, toRecord } from '../../src/transports/kafka/wire-mapping.js';
import { testMessage } from '../conformance/transport-suite.js';

describe('PartitionCursor', () => {
  it('commits only past the highest offset below which everything is acked', () => {
    const cursor = new PartitionCursor('t', 0);
    expect(cursor.commitCandidate()).toBeUndefined();
    for (const offset of [5n, 6n, 7n]) cursor.markRead(offset);
    cursor.markAcked(6n);
    cursor.markAcked(7n);
    expect(cursor.commitCandidate()).toBe(5n); // 5 is unsettled: the commit stays at it
    cursor.markAcked(5n);
    expect(cursor.commitCandidate()).toBe(8n); // Kafka commits the next offset to read
    cursor.markCommitted(8n);
    expect(cursor.commitCandidate()).toBeUndefined();
    expect(cursor.hasRead(7n)).toBe(true);
    expect(cursor.hasRead(8n)).toBe(false);
  });
});

describe('wire mapping', () => {
  it('carries the id in a header and the ordering key as the Kafka key, and reads both back', () => {
    const message = testMessage('m', 'account-7');
    const record = toRecord('topic', message);
    expect(record.key?.toString()).toBe('account-7');
    const back = fromRecord({ ...record, partition: 0, offset: 0n, key: record.key ?? null });
    expect(back.id).toBe(message.id);
    expect(back.headers).toEqual(message.headers);
    expect(back.body.equals(message.body)).toBe(true);
  });
});
