/** The logging surface Surety uses; a pino logger fits, so does a console wrapper. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The levels every logger Surety accepts must have. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** Whether `value` has every level of {@link Logger} as a method. */
export function isLogger(value: unknown): value is Logger {
  return LOG_LEVELS.every((level) => typeof (value as Record<string, unknown> | null)?.[level] === 'function');
}

const noop = () => undefined;

/** Discards everything; the default where a component has no logger of its own. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/**
 * `logger`, except that a line it fails to write is dropped instead of thrown: a component logs from
 * catch blocks, timers and fire-and-forget work, where a throwing logger would escape as an unhandled
 * rejection or stop a loop for good.
 */
export function neverThrowing(logger: Logger): Logger {
  const safe =
    (level: keyof Logger) =>
    (obj: object, msg?: string): void => {
      try {
        logger[level](obj, msg);
      } catch {
        // nowhere left to report it
      }
    };
  return { debug: safe('debug'), info: safe('info'), warn: safe('warn'), error: safe('error') };
}
