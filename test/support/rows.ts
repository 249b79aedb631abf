import { createEnvelope } from '../../src/core/envelope.js';
import type { NewOutboxRow } from '../../src/ports/outbox-store.js';
import { rowFromEnvelope } from '../../src/producer/outbox-rows.js';

let counter = 0;
export function newRow(
  overrides: Partial<{ type: string; key: string; orderingKey: string; createdAt: number }> = {},
): NewOutboxRow {
  counter++;
  const env = createEnvelope(
    {
      type: overrides.type ?? 'order.created',
      key: overrides.key ?? `k-${counter}-${Math.random()}`,
      ...(overrides.orderingKey !== undefined && { orderingKey: overrides.orderingKey }),
      payload: { n: counter },
    },
    new Date(overrides.createdAt ?? 1_000),
  );
  return rowFromEnvelope(env, env.type);
}
