/*
 * Injection tokens of what SuretyModule provides, as @nestjs/bullmq's getQueueToken: inject them with
 * `@Inject(SURETY_OUTBOX)`. Strings, so that a token is readable in Nest's own error messages.
 */

/** The `Store`. */
export const SURETY_STORE = 'SuretyStore';
/** The `Transport`. */
export const SURETY_TRANSPORT = 'SuretyTransport';
/** The `Outbox`. */
export const SURETY_OUTBOX = 'SuretyOutbox';
/** The `OutboxRelay`, or `undefined` when configured with `relay: false`. */
export const SURETY_RELAY = 'SuretyRelay';
/** Every `Consumer`, by group: a `ReadonlyMap<string, Consumer>`. */
export const SURETY_CONSUMERS = 'SuretyConsumers';
/** Every `ReplayJob`, by its consumer's group: a `ReadonlyMap<string, ReplayJob>`. */
export const SURETY_REPLAY_JOBS = 'SuretyReplayJobs';
/** @internal Everything the module built, and its lifecycle. */
export const SURETY_RUNTIME = 'SuretyRuntime';

/** The token of the `Consumer` of `group`. */
export function getConsumerToken(group: string): string {
  return `SuretyConsumer:${group}`;
}

/** The token of the `ReplayJob` of `group`'s consumer (`undefined` with `replay: false`). */
export function getReplayJobToken(group: string): string {
  return `SuretyReplayJob:${group}`;
}
