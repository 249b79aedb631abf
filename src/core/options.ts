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
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    throw new InvalidOptionError(path || prefix, issue.message);
  }
  return Object.freeze(result.data) as Readonly<z.output<S>>;
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
