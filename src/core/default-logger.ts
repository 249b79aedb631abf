import { pino } from 'pino';
import { InvalidOptionError } from './errors.js';
import { neverThrowing, silentLogger, type Logger } from './logger.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

let root: pino.Logger | undefined;

/**
 * The logger of every component given none (relay, consumer and its replay job, admin server,
 * transports): JSON lines on stderr, written synchronously (a crash loses none), at the level of
 * SURETY_LOG_LEVEL (default info); `name` says which component wrote the line. One destination per
 * process, shared by all of them. Pass `logger: null` to a component to silence it.
 * @example
 * const log = defaultLogger('surety-consumer');
 * log.warn({ group: 'billing' }, 'handler failed');
 * // stderr: {"level":40,"time":…,"name":"surety-consumer","group":"billing","msg":"handler failed"}
 */
export function defaultLogger(name: string): Logger {
  root ??= pino({ level: levelFromEnv(process.env.SURETY_LOG_LEVEL) }, pino.destination({ dest: 2, sync: true }));
  return root.child({ name });
}

/**
 * A component's logger: the one given (made never to throw, see neverThrowing), none for `null`,
 * {@link defaultLogger} when absent.
 * @example
 * this.log = componentLogger(options.logger, 'surety-relay');
 */
export function componentLogger(given: Logger | null | undefined, name: string): Logger {
  if (given === null) return silentLogger;
  return given === undefined ? defaultLogger(name) : neverThrowing(given);
}

function levelFromEnv(value: string | undefined): string {
  const level = value?.trim().toLowerCase() || 'info';
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new InvalidOptionError('SURETY_LOG_LEVEL', `must be one of ${LEVELS.join(', ')} (got "${value}")`);
  }
  return level;
}
