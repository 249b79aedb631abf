import { SuretyError } from '../core/errors.js';

/**
 * Throw from a handler when retrying cannot help (invalid data, a rule that will never pass): the
 * message goes to the dead-letter table as dead at once.
 */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** Throw from a handler to ask for a retry later (the default for any other error). */
export class RetryLaterError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryLaterError';
  }
}

/** The consumer's own database failed (not the handler): nothing is acked, consumption pauses. */
export class ConsumerStoreUnavailableError extends SuretyError {
  constructor(options?: { cause?: unknown }) {
    super('SURETY_STORE_FAILED', 'the consumer database is unavailable; pausing without acking', options);
  }
}
