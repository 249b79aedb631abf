import { z } from 'zod';
import { parseOptions } from './options.js';

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

const DEFAULTS = { initialMs: 1_000, factor: 2, maxMs: 300_000, jitter: 0.2 } as const;

/** The options of a backoff, as every option schema that takes one embeds it. */
export const backoffSchema = z
  .object(
    {
      initialMs: z.number().gt(0, 'must be > 0').optional(),
      factor: z.number().min(1, 'must be >= 1').optional(),
      maxMs: z.number().gt(0, 'must be > 0').optional(),
      jitter: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
      schedule: z
        .array(z.number().finite().min(0, 'must be a finite delay >= 0 ms'))
        .min(1, 'must be a non-empty list of finite delays >= 0 ms')
        .optional(),
    },
    { error: 'must be an object' },
  )
  .refine((o) => (o.maxMs ?? DEFAULTS.maxMs) >= (o.initialMs ?? DEFAULTS.initialMs), {
    message: 'must be >= initialMs',
    path: ['maxMs'],
  });

export function createBackoff(options: BackoffOptions = {}, optionName = 'backoff'): Backoff {
  const o = parseOptions(backoffSchema, options, optionName);
  const initialMs = o.initialMs ?? DEFAULTS.initialMs;
  const factor = o.factor ?? DEFAULTS.factor;
  const maxMs = o.maxMs ?? DEFAULTS.maxMs;
  const jitter = o.jitter ?? DEFAULTS.jitter;
  const schedule = o.schedule ? [...o.schedule] : undefined;
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
