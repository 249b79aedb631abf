import { z } from 'zod';
import { InvalidOptionError } from './errors.js';
import { componentLogger } from './default-logger.js';
import { isLogger, type Logger } from './logger.js';

/**
 * Parses options once, at construction, into a frozen object. The first problem becomes an
 * {@link InvalidOptionError} that names the option path and what is allowed.
 */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown, prefix: string): Readonly<z.output<S>> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new InvalidOptionError(optionPath(prefix, issue.path) || 'options', issue.message);
  }
  return Object.freeze(result.data) as Readonly<z.output<S>>;
}

/** `relay.backoff.schedule[0]`: keys joined by dots, list positions in brackets. */
function optionPath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (at, key) => (typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${String(key)}` : String(key)),
    prefix,
  );
}

/**
 * A pino-compatible logger that drops a line it cannot write (see neverThrowing); `null` is silent,
 * and absent is the shared default (JSON on stderr, SURETY_LOG_LEVEL, see defaultLogger) named `name`.
 */
export const loggerOption = (name: string) =>
  z
    .custom<Logger>(isLogger, 'must be a logger with debug, info, warn and error methods (pino-compatible)')
    .nullish()
    .transform((logger) => componentLogger(logger, name));
