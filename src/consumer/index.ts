export { Consumer } from './consumer.js';
export type { ConsumerOptions, DeadLetterAlert } from './consumer-options.js';
export { DEFAULT_RETRY_SCHEDULE_MS } from './consumer-options.js';
export { ReplayJob, type ReplayJobOptions } from './replay-job.js';
export { fetchBack, type FetchBackOptions, type FetchedState } from './fetch-back.js';
export type { VersionGuard } from './version-guard.js';
export { PermanentError, RetryLaterError } from './errors.js';
export type {
  BatchContext,
  BatchHandler,
  BatchMessage,
  Handler,
  HandlerContext,
  Upcaster,
} from './handler-registry.js';
export { ConsumerRetention, type ConsumerRetentionOptions, type RetentionPass } from './consumer-retention.js';
