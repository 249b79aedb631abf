/** Stable error codes. Match on `code`, never on message text. */
export type SuretyErrorCode =
  | 'SURETY_INVALID_OPTION'
  | 'SURETY_INVALID_INPUT'
  | 'SURETY_UNAUTHENTICATED'
  | 'SURETY_FORBIDDEN'
  | 'SURETY_NOT_FOUND'
  | 'SURETY_CONFLICT'
  | 'SURETY_PAYLOAD_TOO_LARGE'
  | 'SURETY_UNSUPPORTED_MEDIA_TYPE'
  | 'SURETY_INTERNAL_ERROR'
  | 'SURETY_INVALID_MESSAGE'
  | 'SURETY_POISON_MESSAGE'
  | 'SURETY_PUBLISH_NACKED'
  | 'SURETY_PUBLISH_UNROUTABLE'
  | 'SURETY_PUBLISH_REFUSED'
  | 'SURETY_PUBLISH_TIMEOUT'
  | 'SURETY_CONNECTION_LOST'
  | 'SURETY_TRANSPORT_CLOSED'
  | 'SURETY_STORE_FAILED'
  | 'SURETY_STORE_CONFLICT'
  | 'SURETY_STORE_BUSY'
  | 'SURETY_TRANSACTION_ABORTED'
  | 'SURETY_TRANSACTION_ENDED'
  | 'SURETY_MIGRATION_FAILED'
  | 'SURETY_NOT_MIGRATED'
  | 'SURETY_DRIVER_MISSING'
  | 'SURETY_NOT_SETTLED';

/** Base class of every error Surety throws: a stable `code` and the original `cause`. */
export class SuretyError extends Error {
  readonly code: SuretyErrorCode;

  constructor(code: SuretyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option or config value is invalid; `option` names it. */
export class InvalidOptionError extends SuretyError {
  constructor(
    readonly option: string,
    /** What is wrong with it, without the option's name, e.g. `must be an integer from 1 to 100`. */
    readonly detail: string,
  ) {
    super('SURETY_INVALID_OPTION', `invalid option "${option}": ${detail}`);
  }
}

/** A message given to `outbox.add` is malformed. */
export class InvalidMessageError extends SuretyError {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('SURETY_INVALID_MESSAGE', `invalid message field "${field}": ${detail}`);
  }
}

/** A message received from a broker cannot be decoded into an envelope. */
export class PoisonMessageError extends SuretyError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('SURETY_POISON_MESSAGE', `undecodable message: ${detail}`, options);
  }
}

/**
 * The broker did not positively confirm a publish. The message must not be counted as sent.
 * `SURETY_PUBLISH_REFUSED`: the broker refused this very publish (RabbitMQ closed the channel at it,
 * e.g. a missing exchange); the message carries the broker's reply text.
 */
export class PublishError extends SuretyError {
  constructor(
    code: Extract<
      SuretyErrorCode,
      | 'SURETY_PUBLISH_NACKED'
      | 'SURETY_PUBLISH_UNROUTABLE'
      | 'SURETY_PUBLISH_REFUSED'
      | 'SURETY_PUBLISH_TIMEOUT'
      | 'SURETY_CONNECTION_LOST'
      | 'SURETY_TRANSPORT_CLOSED'
    >,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/**
 * Codes of a {@link StoreError}. `SURETY_STORE_CONFLICT`: the database ended the transaction as a
 * deadlock victim or a serialization failure; `SURETY_STORE_BUSY`: a lock was not granted in time
 * (SQLite's busy database, MySQL's lock wait timeout). Neither says anything about the work: running
 * it again is the remedy.
 */
export type StoreErrorCode = 'SURETY_STORE_FAILED' | 'SURETY_STORE_CONFLICT' | 'SURETY_STORE_BUSY';

/**
 * A database operation of a store failed; each dialect derives `code` from its driver's error codes.
 * @example
 * if (err instanceof StoreError && err.code === 'SURETY_STORE_CONFLICT') retry();
 */
export class StoreError extends SuretyError {
  declare readonly code: StoreErrorCode;

  constructor(message: string, options?: { cause?: unknown; code?: StoreErrorCode }) {
    super(
      options?.code ?? 'SURETY_STORE_FAILED',
      message,
      options && 'cause' in options ? { cause: options.cause } : {},
    );
  }
}

/**
 * COMMIT found the transaction already aborted and rolled it back: a statement in it failed and
 * its error was caught, so nothing of the transaction was written.
 */
export class TransactionAbortedError extends SuretyError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('SURETY_TRANSACTION_ABORTED', detail, options);
  }
}

/**
 * A statement was issued on a transaction's executor after the transaction's work had settled: it
 * would have run after COMMIT or ROLLBACK, outside the transaction, or on a connection back in the pool.
 */
export class TransactionEndedError extends SuretyError {
  constructor() {
    super(
      'SURETY_TRANSACTION_ENDED',
      'the transaction had already ended: a statement must be issued, and awaited, before the transaction callback returns or throws',
    );
  }
}

/** The database holds none of Surety's tables (or is not there at all): run the store's migrate first. */
export class NotMigratedError extends SuretyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SURETY_NOT_MIGRATED', message, options);
  }
}

/** An optional peer dependency (a driver) is not installed. */
export class DriverMissingError extends SuretyError {
  constructor(pkg: string, options?: { cause?: unknown }) {
    super('SURETY_DRIVER_MISSING', `the optional dependency "${pkg}" is not installed: npm install ${pkg}`, options);
  }
}

/** Whether `test` holds for `err` or an error in its `cause` chain (at most `maxDepth` links). */
export function someCause(err: unknown, test: (e: unknown) => boolean, maxDepth = 10): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < maxDepth; depth++) {
    if (test(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Short, log-safe description of any thrown value. */
export function describeError(err: unknown): string {
  if (err instanceof SuretyError) return `${err.code}: ${err.message}`;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return code === undefined ? err.message : `${String(code)}: ${err.message}`;
  }
  return String(err);
}
