import { z } from 'zod';
import { isMessageId } from '../core/envelope.js';
import type { AuditFilter, DeadLetterFilter, JobKind, OutboxFilter, PageRequest } from '../ports/admin-store.js';
import { InvalidInputError, type InputIssue } from './admin-errors.js';

/** The largest page a list returns. */
export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 50;
export const MAX_REASON = 500;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses a time given as epoch milliseconds or ISO 8601 (`2025-01-31`, `2025-01-31T12:00:00Z`).
 * Returns undefined when it is neither.
 * @example parseTime('2025-01-31T12:00:00Z') // 1738324800000
 */
export function parseTime(text: string): number | undefined {
  const t = text.trim();
  if (/^\d{1,16}$/.test(t)) return Number(t);
  if (!ISO_TIME.test(t)) return undefined;
  // Date.parse rolls 2025-02-30 over to March; a typo must be an error instead.
  const [y, m, d] = t.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

const timeSchema = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? v : parseTime(v);
  if (ms === undefined || !Number.isSafeInteger(ms) || ms < 0) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 time or epoch milliseconds' });
    return z.NEVER;
  }
  return ms;
});

/** A status list: an array or a comma-separated string, each value one of `allowed`. */
function statusList<T extends string>(allowed: readonly [T, ...T[]]) {
  return z.union([z.array(z.string()), z.string()]).transform((v, ctx) => {
    const values = (typeof v === 'string' ? v.split(',') : v).map((s) => s.trim()).filter(Boolean);
    const bad = values.find((s) => !(allowed as readonly string[]).includes(s));
    if (bad !== undefined || values.length === 0) {
      const what = bad === undefined ? 'must not be empty' : `"${bad.slice(0, 40)}" is not a status`;
      ctx.addIssue({ code: 'custom', message: `${what}; allowed: ${allowed.join(', ')}` });
      return z.NEVER;
    }
    return [...new Set(values)] as T[];
  });
}

/** PostgreSQL text cannot hold U+0000: such input is the client's mistake, refused before any store sees it. */
export const NO_NUL = 'must not contain U+0000 (NUL)';
export const hasNoNul = (s: string) => !s.includes('\u0000');

const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).refine(hasNoNul, NO_NUL);

function timeRange<T extends { from?: number; to?: number }>(v: T, ctx: z.RefinementCtx): void {
  if (v.from !== undefined && v.to !== undefined && v.from >= v.to) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after "from"' });
  }
}

export const DEAD_LETTER_STATUSES = ['pending', 'replaying', 'resolved', 'ignored', 'dead'] as const;
export const OUTBOX_STATUSES = ['pending', 'sent', 'dead'] as const;
export const JOB_KINDS = ['dlq.replay', 'dlq.ignore', 'outbox.resend'] as const satisfies readonly JobKind[];
/** Every action the audit log records. */
export const AUDIT_ACTIONS = [
  'dlq.replay',
  'dlq.ignore',
  'dlq.edit',
  'outbox.resend',
  'job.create',
  'job.cancel',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const deadLetterFilterSchema = z
  .strictObject({
    status: statusList(DEAD_LETTER_STATUSES).optional(),
    type: text(200).optional(),
    key: text(200).optional(),
    group: text(200).optional(),
    error: text(200).optional(),
    poison: z.boolean().optional(),
    from: timeSchema.optional(),
    to: timeSchema.optional(),
  })
  .superRefine(timeRange);

export const outboxFilterSchema = z
  .strictObject({
    status: statusList(OUTBOX_STATUSES).optional(),
    type: text(200).optional(),
    key: text(200).optional(),
    topic: text(200).optional(),
    error: text(200).optional(),
    from: timeSchema.optional(),
    to: timeSchema.optional(),
  })
  .superRefine(timeRange);

export const auditFilterSchema = z
  .strictObject({
    actor: text(64).optional(),
    action: text(64)
      .refine((a) => (AUDIT_ACTIONS as readonly string[]).includes(a), `must be one of ${AUDIT_ACTIONS.join(', ')}`)
      .optional(),
    target: text(200).optional(),
    from: timeSchema.optional(),
    to: timeSchema.optional(),
  })
  .superRefine(timeRange);

export const pageSchema = z.strictObject({
  limit: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(MAX_PAGE, `must be at most ${MAX_PAGE}`)
    .default(DEFAULT_PAGE),
  before: z.number().int('must be an integer').min(1, 'must be at least 1').max(Number.MAX_SAFE_INTEGER).optional(),
});

export const rowIdSchema = z
  .number()
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .max(Number.MAX_SAFE_INTEGER, 'is too large');

export const messageIdSchema = z.string().refine(isMessageId, 'must be a message id (a UUID)');

/** An optional reason: trimmed; empty means none. */
export const optionalReasonSchema = z
  .string()
  .trim()
  .max(MAX_REASON, `must be at most ${MAX_REASON} characters`)
  .refine(hasNoNul, NO_NUL)
  .nullish()
  .transform((v) => (v ? v : null));

export const requiredReasonSchema = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'is required (say why)')
  .max(MAX_REASON, `must be at most ${MAX_REASON} characters`)
  .refine(hasNoNul, NO_NUL);

/** An edited body: the message as it will be handed to the handler again. */
export const editBodySchema = z
  .string({ error: 'is required' })
  .min(1, 'must not be empty')
  .max(1_048_576, 'must be at most 1 MiB')
  .refine(hasNoNul, NO_NUL);

/**
 * `true` is the only value: acting on every row must be said outright. Without it a job needs at
 * least one filter, so a request that lost its filter (a client bug, a typo in a key) is refused
 * instead of acting on the whole table.
 */
const allSchema = z.literal(true, { error: 'must be true (or left out)' }).optional();

/** At least one filter, or `all: true` without one. */
function filterOrAll(v: { filter: object; all?: true }, ctx: z.RefinementCtx): void {
  const filtered = Object.keys(v.filter).length > 0;
  if (!filtered && !v.all) {
    ctx.addIssue({
      code: 'custom',
      path: ['filter'],
      message: 'name at least one filter, or set "all": true to act on every row',
    });
  } else if (filtered && v.all) {
    ctx.addIssue({
      code: 'custom',
      path: ['all'],
      message: 'acts on every row: give either a filter or "all", not both',
    });
  }
}

/**
 * A bulk job. A `dlq.replay` filter that names no status acts on pending and dead rows: ignored
 * rows are replayed only when the filter names `ignored`.
 */
export const jobInputSchema = (maxRate: number) => {
  const rate = z.number().min(1, 'must be at least 1').max(maxRate, `must be at most ${maxRate}`).default(50);
  return z.discriminatedUnion(
    'kind',
    [
      z
        .strictObject({
          kind: z.literal('dlq.replay'),
          filter: deadLetterFilterSchema.default({}),
          all: allSchema,
          reason: optionalReasonSchema,
          ratePerSecond: rate,
        })
        .superRefine(filterOrAll),
      z
        .strictObject({
          kind: z.literal('dlq.ignore'),
          filter: deadLetterFilterSchema.default({}),
          all: allSchema,
          reason: requiredReasonSchema,
          ratePerSecond: rate,
        })
        .superRefine(filterOrAll),
      z
        .strictObject({
          kind: z.literal('outbox.resend'),
          filter: outboxFilterSchema.default({}),
          all: allSchema,
          reason: optionalReasonSchema,
          ratePerSecond: rate,
        })
        .superRefine(filterOrAll),
    ],
    { error: `must be one of ${JOB_KINDS.join(', ')}` },
  );
};

export type DeadLetterFilterInput = z.input<typeof deadLetterFilterSchema>;
export type OutboxFilterInput = z.input<typeof outboxFilterSchema>;
export type AuditFilterInput = z.input<typeof auditFilterSchema>;
export type PageInput = z.input<typeof pageSchema>;
export type JobInput = z.input<ReturnType<typeof jobInputSchema>>;

// The parsed shapes must stay assignable to the port's.
type Assert<T extends U, U> = T;
type _Checks = [
  Assert<z.output<typeof deadLetterFilterSchema>, DeadLetterFilter>,
  Assert<z.output<typeof outboxFilterSchema>, OutboxFilter>,
  Assert<z.output<typeof auditFilterSchema>, AuditFilter>,
  Assert<z.output<typeof pageSchema>, PageRequest>,
];

/** Zod issues as `{path, message}`, the path prefixed with where the value came from. */
export function toIssues(error: z.ZodError, prefix: string): InputIssue[] {
  return error.issues.map((i) => ({
    path: [prefix, ...i.path.map(String)].filter(Boolean).join('.'),
    message: i.message,
  }));
}

/** Parses an operator's input or throws {@link InvalidInputError} naming every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, prefix: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new InvalidInputError(toIssues(result.error, prefix));
  return result.data;
}
