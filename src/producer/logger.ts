import { pino } from 'pino';

/** The logging surface Surety uses; a pino logger fits, so does a console wrapper. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Default structured logger: pino on stderr, level from SURETY_LOG_LEVEL (default info). */
export function defaultLogger(name: string): Logger {
  return pino({ name, level: process.env.SURETY_LOG_LEVEL ?? 'info' }, pino.destination(2));
}
