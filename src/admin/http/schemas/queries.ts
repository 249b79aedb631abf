import { z } from '@hono/zod-openapi';
import { InvalidInputError } from '../../admin-errors.js';
import { AUDIT_ACTIONS, DEFAULT_PAGE, hasNoNul, MAX_PAGE, NO_NUL } from '../../admin-schemas.js';
import { STORE_NAME, STORE_NAME_RULE } from '../../../ports/store-name.js';

/**
 * Query strings arrive as text; the service checks the values and the handler names them `query.<key>`.
 * A NUL is refused here already: no database takes it, so it is the client's mistake, not a store failure.
 */
const param = (name: string, description: string, example?: string) =>
  z
    .string({ error: 'must be given once' })
    .refine(hasNoNul, NO_NUL)
    .optional()
    .openapi({ param: { name, in: 'query' }, description, ...(example ? { example } : {}) });

const integer = (name: string, description: string) =>
  z
    .string({ error: 'must be given once' })
    .regex(/^\d{1,16}$/, 'must be a positive integer')
    .transform(Number)
    .optional()
    .openapi({ param: { name, in: 'query' }, description });

const TIME = 'ISO 8601 time or epoch milliseconds';

/** Which store a list, row, action, job or audit route works on; unknown names are refused by the directory. */
const store = {
  store: z
    .string({ error: 'must be given once' })
    .regex(STORE_NAME, STORE_NAME_RULE)
    .optional()
    .openapi({
      param: { name: 'store', in: 'query' },
      description: 'the store to read or act on, as listed by GET /api/stores (default: the first)',
      example: 'billing',
    }),
};

const page = {
  limit: integer('limit', `page size, 1-${MAX_PAGE} (default ${DEFAULT_PAGE})`),
  before: integer('before', "the previous page's nextBefore"),
};

export const outboxQuerySchema = z.strictObject({
  status: param('status', 'comma-separated: pending, sent, dead', 'pending,dead'),
  type: param('type', 'message type, exact'),
  key: param('key', 'business key, exact'),
  topic: param('topic', 'topic, exact'),
  error: param('error', 'substring of the last error, case-insensitive'),
  from: param('from', `created at or after (${TIME})`),
  to: param('to', `created before (${TIME})`),
  ...page,
  ...store,
});

export const deadLetterQuerySchema = z.strictObject({
  status: param('status', 'comma-separated: pending, replaying, resolved, ignored, dead', 'pending,dead'),
  type: param('type', 'message type, exact'),
  key: param('key', 'business key, exact'),
  group: param('group', 'consumer group, exact'),
  error: param('error', 'substring of the last error, case-insensitive'),
  poison: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional()
    .openapi({ param: { name: 'poison', in: 'query' }, description: 'only undecodable messages (or only decodable)' }),
  from: param('from', `created at or after (${TIME})`),
  to: param('to', `created before (${TIME})`),
  ...page,
  ...store,
});

export const auditQuerySchema = z.strictObject({
  actor: param('actor', 'token name, exact'),
  action: param('action', `one of ${AUDIT_ACTIONS.join(', ')}`, 'dlq.ignore'),
  target: param('target', 'e.g. dlq:42 or outbox:<messageId>'),
  from: param('from', `at or after (${TIME})`),
  to: param('to', `before (${TIME})`),
  ...page,
  ...store,
});

export const jobsQuerySchema = z.strictObject({ ...page, ...store });

/** The query of row, action and job routes: only `store`. */
export const storeQuerySchema = z.strictObject(store);

type Paged = { limit?: number; before?: number; store?: string };

/** Splits a parsed query into the store name, the service's filter and page, dropping absent keys. */
export function splitQuery<Q extends Paged>(
  query: Q,
): { store: string | undefined; filter: Omit<Q, keyof Paged>; page: { limit?: number; before?: number } } {
  const { limit, before, store, ...rest } = query;
  const filter = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Omit<Q, keyof Paged>;
  return {
    store,
    filter,
    page: { ...(limit !== undefined ? { limit } : {}), ...(before !== undefined ? { before } : {}) },
  };
}

/** Runs a list call, renaming the service's `filter.x` / `page.x` issues to the query keys the client sent. */
export async function asQuery<T>(list: () => Promise<T>): Promise<T> {
  try {
    return await list();
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    throw new InvalidInputError(err.issues.map((i) => ({ ...i, path: i.path.replace(/^(filter|page)\b/, 'query') })));
  }
}
