import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { editBodySchema, optionalReasonSchema, requiredReasonSchema } from '../../admin-schemas.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { actionResultSchema, errors, idParams, json, jsonBody, pageOf } from '../schemas/common.js';
import { asQuery, deadLetterQuerySchema, splitQuery, storeQuerySchema } from '../schemas/queries.js';
import { deadLetterRowSchema, deadLetterWithHistorySchema } from '../schemas/rows.js';

const list = createRoute({
  method: 'get',
  path: '/api/dead-letters',
  tags: ['dead letters'],
  summary: 'List dead letters, newest first',
  request: { query: deadLetterQuerySchema },
  responses: { 200: json(pageOf(deadLetterRowSchema, 'DeadLetterPage'), 'A page of rows'), ...errors(400, 401) },
});

const one = createRoute({
  method: 'get',
  path: '/api/dead-letters/{id}',
  tags: ['dead letters'],
  summary: 'One dead letter with its history',
  request: { params: idParams, query: storeQuerySchema },
  responses: { 200: json(deadLetterWithHistorySchema, 'The row'), ...errors(400, 401, 404) },
});

const ACTION_ERRORS = errors(400, 401, 403, 404, 409, 413, 415);

const replay = createRoute({
  method: 'post',
  path: '/api/dead-letters/{id}/replay',
  tags: ['dead letters'],
  summary: "Make a pending, dead or ignored row due now; the consumer's replay job runs it",
  request: {
    params: idParams,
    query: storeQuerySchema,
    body: jsonBody(z.strictObject({ reason: optionalReasonSchema.optional() }), false),
  },
  responses: { 200: json(actionResultSchema, 'Due now'), ...ACTION_ERRORS },
});

const ignore = createRoute({
  method: 'post',
  path: '/api/dead-letters/{id}/ignore',
  tags: ['dead letters'],
  summary: 'Close a pending or dead row without running it',
  request: {
    params: idParams,
    query: storeQuerySchema,
    body: jsonBody(z.strictObject({ reason: requiredReasonSchema }), true),
  },
  responses: { 200: json(actionResultSchema, 'Ignored'), ...ACTION_ERRORS },
});

const edit = createRoute({
  method: 'post',
  path: '/api/dead-letters/{id}/edit',
  tags: ['dead letters'],
  summary: "Replace the row's body, then replay it (403 unless the server allows editing)",
  request: {
    params: idParams,
    query: storeQuerySchema,
    body: jsonBody(z.strictObject({ body: editBodySchema, reason: requiredReasonSchema }), true),
  },
  responses: { 200: json(actionResultSchema, 'Edited and due now'), ...ACTION_ERRORS },
});

export function deadLetterRoutes(app: OpenAPIHono<AppEnv>, { stores }: AppDeps): void {
  app.openapi(list, async (c) => {
    const { store, filter, page } = splitQuery(c.req.valid('query'));
    const entry = stores.get(store);
    const items = await asQuery(() => entry.read((service) => service.listDeadLetters(filter, page)));
    return c.json({ ...items, store: entry.name }, 200);
  });
  app.openapi(one, async (c) => {
    const entry = stores.get(c.req.valid('query').store);
    return c.json(await entry.read((service) => service.getDeadLetter(c.req.valid('param').id)), 200);
  });
  app.openapi(replay, async (c) => {
    const { service } = stores.get(c.req.valid('query').store);
    const { reason } = c.req.valid('json');
    return c.json(await service.replay(c.req.valid('param').id, c.get('actor'), reason), 200);
  });
  app.openapi(ignore, async (c) => {
    const { service } = stores.get(c.req.valid('query').store);
    const { reason } = c.req.valid('json');
    return c.json(await service.ignore(c.req.valid('param').id, c.get('actor'), reason), 200);
  });
  app.openapi(edit, async (c) => {
    const { service } = stores.get(c.req.valid('query').store);
    const { body, reason } = c.req.valid('json');
    return c.json(await service.edit(c.req.valid('param').id, c.get('actor'), body, reason), 200);
  });
}
