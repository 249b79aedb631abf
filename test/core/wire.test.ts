import { describe, expect, it } from 'vitest';
import { createEnvelope } from '../../src/core/envelope.js';
import { InvalidMessageError, PoisonMessageError } from '../../src/core/errors.js';
import { decodeEnvelope, encodeEnvelope, WIRE_HEADERS, wireOrderingKey } from '../../src/core/wire.js';

describe('wire format: the ordering key', () => {
  it('travels in surety-ordering-key and decodes into envelope.orderingKey', () => {
    const envelope = createEnvelope({ type: 'account.credited', orderingKey: 'acct-7', payload: { amount: 5 } });
    const wire = encodeEnvelope(envelope);
    expect(wire.headers[WIRE_HEADERS.orderingKey]).toBe('acct-7');
    expect(WIRE_HEADERS.orderingKey).toBe('surety-ordering-key');
    expect(wire.headers[WIRE_HEADERS.key]).toBe(envelope.id); // the default key: no deduplication
    const decoded = decodeEnvelope(wire);
    expect(decoded.orderingKey).toBe('acct-7');
    expect(decoded.key).toBe(envelope.id);
    expect(decoded.headers).toEqual({}); // reserved, so not among the user's headers
    expect(wireOrderingKey(wire.headers)).toBe('acct-7');
  });

  it('defaults the ordering key to key, and writes it all the same', () => {
    const wire = encodeEnvelope(createEnvelope({ type: 'order.created', key: 'order-1', payload: {} }));
    expect(wire.headers[WIRE_HEADERS.orderingKey]).toBe('order-1');
    expect(decodeEnvelope(wire).orderingKey).toBe('order-1');
  });

  it('decodes a message without the header, from an older producer, with orderingKey = key', () => {
    const wire = encodeEnvelope(
      createEnvelope({ type: 'order.created', key: 'order-2', orderingKey: 'c', payload: {} }),
    );
    const { [WIRE_HEADERS.orderingKey]: _dropped, ...older } = wire.headers;
    const decoded = decodeEnvelope({ ...wire, headers: older });
    expect(decoded.key).toBe('order-2');
    expect(decoded.orderingKey).toBe('order-2');
    expect(wireOrderingKey(older)).toBe('order-2');
  });

  it('reads a header the broker hands as bytes', () => {
    const wire = encodeEnvelope(createEnvelope({ type: 'order.created', orderingKey: 'acct-ü', payload: {} }));
    const headers = { ...wire.headers, [WIRE_HEADERS.orderingKey]: Buffer.from('acct-ü', 'utf8') };
    expect(decodeEnvelope({ ...wire, headers }).orderingKey).toBe('acct-ü');
    expect(wireOrderingKey(headers)).toBe('acct-ü');
  });

  it('rejects an empty ordering key header as poison, naming it', () => {
    const wire = encodeEnvelope(createEnvelope({ type: 'order.created', payload: {} }));
    const headers = { ...wire.headers, [WIRE_HEADERS.orderingKey]: '' };
    expect(() => decodeEnvelope({ ...wire, headers })).toThrow(PoisonMessageError);
    expect(() => decodeEnvelope({ ...wire, headers })).toThrow(/surety-ordering-key/);
  });

  it('refuses an ordering key that is empty or longer than 200 characters, naming the field', () => {
    for (const orderingKey of ['', 'x'.repeat(201)]) {
      const build = () => createEnvelope({ type: 'order.created', orderingKey, payload: {} });
      expect(build).toThrow(InvalidMessageError);
      expect(build).toThrow(/"orderingKey": must be a non-empty string of at most 200 characters/);
    }
    expect(
      createEnvelope({ type: 'order.created', orderingKey: 'x'.repeat(200), payload: {} }).orderingKey,
    ).toHaveLength(200);
  });
});
