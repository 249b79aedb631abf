import { ConfigError } from '../config/config-error.js';
import { describeError, SuretyError } from '../core/errors.js';

/**
 * Exit codes of every command:
 * 0 done; 1 could not be done (a row not found or in the wrong state, a service unreachable);
 * 2 bad usage (an unknown flag, a malformed value, a bad config) — nothing was attempted.
 * `surety doctor` adds 3 (warnings found) and 4 (a failure found).
 */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2, doctorWarn: 3, doctorFail: 4 });

/** A malformed flag or value: exit 2, nothing changed. */
export class UsageError extends SuretyError {
  constructor(message: string) {
    super('SURETY_INVALID_OPTION', message);
  }
}

/** One of several named databases failed; keeps the cause's code, so the exit code is the cause's. */
export class DatabaseError extends SuretyError {
  constructor(
    readonly database: string,
    cause: unknown,
  ) {
    const inner = cause instanceof SuretyError ? cause.message : describeError(cause);
    super(cause instanceof SuretyError ? cause.code : 'SURETY_STORE_FAILED', `database ${database}: ${inner}`, {
      cause,
    });
  }
}

/** Maps a failed command's error to its message and exit code. */
export function exitFor(err: unknown): { code: number; message: string } {
  if (err instanceof UsageError || err instanceof ConfigError) return { code: EXIT.usage, message: err.message };
  if (err instanceof SuretyError) {
    const usage = err.code === 'SURETY_INVALID_OPTION' || err.code === 'SURETY_INVALID_INPUT';
    const hint = err.code === 'SURETY_NOT_MIGRATED' ? '; run `surety migrate` to create the tables' : '';
    return { code: usage ? EXIT.usage : EXIT.failed, message: `${describeError(err)}${hint}` };
  }
  return { code: EXIT.failed, message: describeError(err) };
}
