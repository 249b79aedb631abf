import { InvalidOptionError } from '../../core/errors.js';

/* Small checks shared by options.ts and topology.ts; each names the offending option. */

export function nonEmptyString(value: unknown, option: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new InvalidOptionError(option, 'must be a non-empty string');
  return value;
}

export function optionalString(value: unknown, option: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidOptionError(option, 'must be a string');
  return value;
}

export function optionalBoolean(value: unknown, option: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidOptionError(option, 'must be true or false');
  return value;
}

export function optionalInteger(
  value: unknown,
  option: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(option, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function oneOf<const T extends string>(value: unknown, option: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidOptionError(option, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return value as T;
}

export function optionalFunction<F extends (...args: never[]) => unknown>(
  value: unknown,
  option: string,
): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw new InvalidOptionError(option, 'must be a function');
  return value as F;
}

export function optionalArray(value: unknown, option: string): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidOptionError(option, 'must be an array');
  return value;
}

export function optionalRecord(value: unknown, option: string): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidOptionError(option, 'must be an object');
  return value as Record<string, unknown>;
}
