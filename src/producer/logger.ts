import { pino } from 'pino';
import type { Logger } from '../core/logger.js';

export type { Logger } from '../core/logger.js';

/** Default structured logger: pino on stderr, level from SURETY_LOG_LEVEL (default info). */
export function defaultLogger(name: string): Logger {
  return pino({ name, level: process.env.SURETY_LOG_LEVEL ?? 'info' }, pino.destination(2));
}
