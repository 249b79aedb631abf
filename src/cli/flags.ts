import type { Command } from 'commander';
import type { z } from 'zod';
import { InvalidInputError } from '../admin/admin-errors.js';
import { MAX_PAGE, parseInput, parseTime } from '../admin/admin-schemas.js';
import { parseDuration } from '../config/duration.js';
import { UsageError } from './cli-errors.js';

/** Where an admin input field came from on the command line. */
const FLAG_OF: Record<string, string> = {
  'filter.status': '--status',
  'filter.type': '--type',
  'filter.key': '--key',
  'filter.group': '--group',
  'filter.topic': '--topic',
  'filter.error': '--error',
  'filter.poison': '--poison',
  'filter.from': '--since',
  'filter.to': '--until',
  'filter.actor': '--actor',
  'filter.action': '--action',
  'filter.target': '--target',
  'page.limit': '--limit',
  'page.before': '--before',
  filter: 'filter flags',
  all: '--all',
  reason: '--reason',
  ratePerSecond: '--rate',
  id: '<id>',
  messageId: '<messageId>',
};

/** Re-words an admin input error with the flag names the operator typed. */
export function asUsageError(err: unknown): unknown {
  if (!(err instanceof InvalidInputError)) return err;
  const lines = err.issues.map((i) => `${FLAG_OF[i.path] ?? i.path}: ${i.message}`);
  return new UsageError(lines.join('\n'));
}

/** A positive integer flag within bounds, e.g. `--limit`. */
export function integerFlag(flag: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  const n = Number(t);
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max} (got "${text}")`);
  return n;
}

export function limitFlag(text: string | undefined): number | undefined {
  return integerFlag('--limit', text, 1, MAX_PAGE);
}

/** `--since` / `--until`: ISO 8601, epoch milliseconds, or a duration ago (`15m`, `2h`, `7d`). */
export function timeFlag(flag: string, text: string | undefined, now: number): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (t === 'now') return now;
  if (/^\d+(\.\d+)?\s*(ms|s|m|min|h|d)$/.test(t)) return now - (parseDuration(t) as number);
  const at = parseTime(t);
  if (at === undefined)
    throw new UsageError(
      `${flag} must be an ISO 8601 time (2025-01-31T12:00:00Z), epoch milliseconds or a duration ago (15m, 2h, 7d) (got "${text}")`,
    );
  return at;
}

/** `--since` and `--until`; `what` says which time they bound, e.g. `created `. */
export function withTimeRangeOptions(cmd: Command, what = ''): Command {
  return cmd
    .option('--since <time>', `${what}at or after: ISO 8601, epoch ms, or a duration ago (15m, 2h, 7d)`)
    .option('--until <time>', `${what}before: same forms as --since`);
}

/**
 * Filter flags validated by the admin schema, `--since`/`--until` becoming `from`/`to`; a bad one is
 * a usage error naming the flag.
 */
export function parseFilterFlags<S extends z.ZodType>(
  schema: S,
  flags: Record<string, unknown> & { since?: string; until?: string },
  now: number,
): z.output<S> {
  const { since, until, ...rest } = flags;
  const input = defined({ ...rest, from: timeFlag('--since', since, now), to: timeFlag('--until', until, now) });
  try {
    return parseInput(schema, input, 'filter');
  } catch (err) {
    throw asUsageError(err);
  }
}

/** Dead-letter row ids given as arguments. */
export function rowIds(texts: readonly string[]): number[] {
  return texts.map((t) => {
    const n = Number(t);
    if (!/^\d+$/.test(t) || !Number.isSafeInteger(n) || n < 1)
      throw new UsageError(`<id> must be a dead-letter id, a positive integer (got "${t}")`);
    return n;
  });
}

/** Drops undefined values, so schemas see only what was given. */
export function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
