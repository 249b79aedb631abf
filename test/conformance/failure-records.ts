import { randomUUID } from 'node:crypto';
import type { FailureRecord, RetryDecision } from '../../src/ports/consumer-store.js';

/** The consumer group of the suites' failure records. */
export const GROUP = 'billing';

/** A delivery failure of group GROUP, with `overrides`. */
export function failure(overrides: Partial<FailureRecord> = {}): FailureRecord {
  return {
    messageId: randomUUID(),
    group: GROUP,
    topic: 'orders',
    type: 'order.created',
    key: 'o-1',
    version: 1,
    headers: { 'surety-type': 'order.created', tenant: 'acme' },
    body: '{"total":42}',
    bodyEncoding: 'utf8',
    error: 'handler failed',
    poison: false,
    now: 1_000,
    ...overrides,
  };
}

/** A retry decision: pending, due at `nextRetryAt`. */
export const retryAt =
  (nextRetryAt: number): ((attempts: number) => RetryDecision) =>
  () => ({ status: 'pending', nextRetryAt });
