import { z } from 'zod';
import type { Clock } from './clock.js';

/*
 * Option schemas whose every failure says what is allowed, so that parseOptions' error names the
 * option and its range (zod's own wording names one bound at a time).
 */

/** An integer from `min` to `max`. */
export function integerIn(min: number, max = Number.MAX_SAFE_INTEGER) {
  const error = `must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/** A string of at least one character. */
export function nonEmptyString() {
  const error = 'must be a non-empty string';
  return z.string({ error }).min(1, { error });
}

export function stringOption() {
  return z.string({ error: 'must be a string' });
}

export function booleanOption() {
  return z.boolean({ error: 'must be true or false' });
}

/** One of a few words. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.map((v) => `"${v}"`).join(', ')}` });
}

export function functionOption<F extends (...args: never[]) => unknown>() {
  return z.custom<F>((v) => typeof v === 'function', 'must be a function');
}

/** A plain object of any keys (not an array). */
export function recordOption() {
  return z.record(z.string(), z.unknown(), { error: 'must be an object' });
}

export function listOf<T extends z.ZodType>(item: T) {
  return z.array(item, { error: 'must be an array' });
}

/** Anything with a `now()`, the system clock by default. */
export function clockOption(fallback: Clock) {
  return z
    .custom<Clock>((c) => typeof (c as Clock | null)?.now === 'function', 'must have a now() method')
    .default(fallback);
}
