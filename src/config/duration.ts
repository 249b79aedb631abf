import { z } from 'zod';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)$/;

/** `30s`, `15m`, `2h`, `7d`, or a number of milliseconds; anything else is left for the schema to refuse. */
export function parseDuration(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = PATTERN.exec(value.trim());
  if (m) return Math.round(Number(m[1]) * UNITS[m[2]!]!);
  return /^\d+$/.test(value.trim()) ? Number(value) : value;
}

/** A duration in milliseconds, written as a number or with a unit. */
export function duration(min = 0) {
  return z.preprocess(
    parseDuration,
    z
      .number({ error: 'must be a duration: milliseconds, or a number with ms, s, m, h or d (e.g. 30s, 15m, 7d)' })
      .int()
      .min(min, { error: `must be at least ${min} ms` }),
  );
}
