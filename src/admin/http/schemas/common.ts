import { z } from '@hono/zod-openapi';
import { messageIdSchema } from '../../admin-schemas.js';

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'SURETY_INVALID_INPUT' }),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi('Error');

export const actionResultSchema = z
  .object({
    changed: z.boolean(),
    warnings: z.array(z.string()).openapi({ example: ['the inbox window has passed: the handler may run again'] }),
  })
  .openapi('ActionResult');

export function pageOf<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      items: z.array(item),
      nextBefore: z.number().int().nullable().openapi({ description: 'pass as `before` for the next page' }),
      store: z.string().openapi({ description: 'the store the page came from', example: 'default' }),
    })
    .openapi(name);
}

/** A JSON response entry of a route. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { content: { 'application/json': { schema } }, description };
}

/** A JSON request body; `required` ones name their missing fields, optional ones accept an empty POST. */
export function jsonBody<T extends z.ZodType>(schema: T, required: boolean) {
  return { content: { 'application/json': { schema } }, required };
}

const ERRORS = {
  400: 'Malformed input; nothing was changed',
  401: 'No or bad credential',
  403: 'Role, CSRF check or a disabled feature',
  404: 'Not found',
  409: "The row's state does not allow the action",
  413: 'Body too large',
  415: 'Body is not JSON',
  503: 'The database did not answer',
} as const;

/** The error responses a route can give. */
export function errors<S extends keyof typeof ERRORS>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((s) => [s, json(errorSchema, ERRORS[s])])) as {
    [K in S]: ReturnType<typeof json<typeof errorSchema>>;
  };
}

export const idParams = z.object({
  id: z
    .string()
    .regex(/^[1-9]\d{0,15}$/, 'must be a positive integer')
    .transform(Number)
    .openapi({ param: { name: 'id', in: 'path' }, example: '42' }),
});

export const messageIdParams = z.object({
  messageId: z
    .string()
    .pipe(messageIdSchema)
    .openapi({ param: { name: 'messageId', in: 'path' }, example: '0194b7a0-0000-7000-8000-000000000000' }),
});
