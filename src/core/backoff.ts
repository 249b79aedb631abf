import { InvalidOptionError } from './errors.js';

/**
 * Capped exponential backoff with jitter. Either an explicit `schedule` of delays (the last one
 * repeats) or `initialMs * factor^(attempt-1)` capped at `maxMs`.
 */
export interface BackoffOptions {
  initialMs?: number;
  factor?: number;
  maxMs?: number;
  /** Fraction of the delay randomised, 0..1. 0.2 means +/-20%. */
  jitter?: number;
  schedule?: readonly number[];
}

export interface Backoff {
  /** Delay before the next attempt after `attempt` failures (attempt >= 1). */
  delayMs(attempt: number, random?: () => number): number;
}

export function createBackoff(options: BackoffOptions = {}, optionName = 'backoff'): Backoff {
  const initialMs = options.initialMs ?? 1_000;
  const factor = options.factor ?? 2;
  const maxMs = options.maxMs ?? 300_000;
  const jitter = options.jitter ?? 0.2;
  const schedule = options.schedule ? [...options.schedule] : undefined;
  if (!(initialMs > 0)) throw new InvalidOptionError(`${optionName}.initialMs`, 'must be > 0');
  if (!(factor >= 1)) throw new InvalidOptionError(`${optionName}.factor`, 'must be >= 1');
  if (!(maxMs >= initialMs)) throw new InvalidOptionError(`${optionName}.maxMs`, 'must be >= initialMs');
  if (!(jitter >= 0 && jitter <= 1)) throw new InvalidOptionError(`${optionName}.jitter`, 'must be between 0 and 1');
  if (schedule && (schedule.length === 0 || schedule.some((d) => !(d >= 0) || !Number.isFinite(d)))) {
    throw new InvalidOptionError(`${optionName}.schedule`, 'must be a non-empty list of finite delays >= 0 ms');
  }
  return Object.freeze({
    delayMs(attempt: number, random: () => number = Math.random): number {
      const n = Math.max(1, Math.floor(attempt));
      const base = schedule
        ? schedule[Math.min(n - 1, schedule.length - 1)]!
        : Math.min(maxMs, initialMs * Math.pow(factor, n - 1));
      const spread = base * jitter * (random() * 2 - 1);
      return Math.max(0, Math.round(base + spread));
    },
  });
}
