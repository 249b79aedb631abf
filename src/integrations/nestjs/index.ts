/**
 * `surety/nestjs`: a NestJS module that provides Surety's components from configuration and runs
 * them with the application's lifecycle, and a decorator for handlers. See docs/integrations/nestjs.md.
 */
export { SuretyModule } from './surety-module.js';
export type { SuretyModuleAsyncOptions } from './surety-module.js';
export type { SuretyModuleOptions, SuretyConsumerConfig, Source } from './module-options.js';
export { SuretyHandler, SURETY_HANDLER_METADATA } from './handler-decorator.js';
export type { SuretyHandlerOptions, SuretyHandlerMetadata } from './handler-decorator.js';
export {
  SURETY_STORE,
  SURETY_TRANSPORT,
  SURETY_OUTBOX,
  SURETY_RELAY,
  SURETY_CONSUMERS,
  SURETY_REPLAY_JOBS,
  getConsumerToken,
  getReplayJobToken,
} from './tokens.js';
