/**
 * Surety: reliable messaging for TypeScript services.
 * Database stores and broker transports have their own entry points (`surety/postgres`,
 * `surety/mysql`, `surety/sqlite`, `surety/rabbitmq`, `surety/embedded`) so that only the driver you
 * use is loaded.
 */
export { createEnvelope, newMessageId } from './core/envelope.js';
export type { Envelope, MessageInput, TraceContext } from './core/envelope.js';
export { encodeEnvelope, decodeEnvelope, WIRE_HEADERS, CONTENT_TYPE } from './core/wire.js';
export type { WireMessage } from './core/wire.js';
export {
  SuretyError,
  InvalidOptionError,
  InvalidMessageError,
  PoisonMessageError,
  PublishError,
  StoreError,
  TransactionAbortedError,
  TransactionEndedError,
  NotMigratedError,
  DriverMissingError,
} from './core/errors.js';
export type { SuretyErrorCode } from './core/errors.js';
export type { BackoffOptions } from './core/backoff.js';
export type { Clock } from './core/clock.js';
export type * from './ports/transport.js';
export type * from './ports/outbox-store.js';
export type * from './ports/sql-executor.js';
export type * from './ports/store.js';
export { Outbox } from './producer/outbox.js';
export type { OutboxOptions, AddResult } from './producer/outbox.js';
export { OutboxRelay } from './producer/outbox-relay.js';
export type { RelayOptions } from './producer/relay-options.js';
export type { Logger } from './core/logger.js';
export { openStore, openOutboxStore } from './stores/open-store.js';
export { Consumer, ReplayJob, fetchBack, PermanentError, RetryLaterError } from './consumer/index.js';
export type {
  ConsumerOptions,
  DeadLetterAlert,
  ReplayJobOptions,
  FetchBackOptions,
  FetchedState,
  VersionGuard,
  BatchContext,
  BatchHandler,
  BatchMessage,
  Handler,
  HandlerContext,
  Upcaster,
} from './consumer/index.js';
export type * from './ports/consumer-store.js';
