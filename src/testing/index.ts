/**
 * `surety/testing`: what an adapter's or a user's own tests need. The conformance suites register
 * with the runner you give them and assert with node:assert, so they run under Vitest or Jest.
 */
export * from './transport-conformance/index.js';
export { createTestHarness, TestHarness, type HarnessConsumerOptions } from './harness/test-harness.js';
export { ManualClock } from './harness/manual-clock.js';
export { NotSettledError } from './harness/settle-wait.js';
export type { TestHarnessOptions } from './harness/harness-options.js';
export type { HarnessFaults } from './harness/harness-faults.js';
export type { PublishedMessage } from './harness/faulty-publisher.js';
export type { DeliveryMatcher } from './harness/faulty-subscriber.js';
export type { HandledMessage, DeadLetteredMessage } from './harness/queries.js';
