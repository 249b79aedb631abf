import type { DeliveryExhausted } from '../ports/transport.js';

/** The error a dead letter records for a message the broker gave up on (see `Delivery.exhausted`). */
export function exhaustedError(exhausted: DeliveryExhausted): string {
  const after = exhausted.deliveries === null ? '' : ` after ${exhausted.deliveries} deliveries`;
  return `the broker gave up on this message${after} (${exhausted.reason}) before a consumer settled it; recorded without running the handler`;
}
