import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { optionalReasonSchema } from '../../admin-schemas.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { actionResultSchema, errors, json, jsonBody, messageIdParams, pageOf } from '../schemas/common.js';
import { asQuery, outboxQuerySchema, splitQuery, storeQuerySchema } from '../schemas/queries.js';
import { outboxRowSchema, outboxWithHistorySchema } from '../schemas/rows.js';

const list = createRoute({
  method: 'get',
  path: '/api/outbox',
  tags: ['outbox'],
  summary: 'List outbox rows, newest first',
  request: { query: outboxQuerySchema },
  responses: { 200: json(pageOf(outboxRowSchema, 'OutboxPage'), 'A page of rows'), ...errors(400, 401) },
});

const one = createRoute({
  method: 'get',
  path: '/api/outbox/{messageId}',
  tags: ['outbox'],
  summary: 'One outbox row with its attempts',
  request: { params: messageIdParams, query: storeQuerySchema },
  responses: { 200: json(outboxWithHistorySchema, 'The row'), ...errors(400, 401, 404) },
});

const resend = createRoute({
  method: 'post',
  path: '/api/outbox/{messageId}/resend',
  tags: ['outbox'],
  summary: 'Publish again as a new attempt with the same message id (also a row already sent)',
  request: {
    params: messageIdParams,
    query: storeQuerySchema,
    body: jsonBody(z.strictObject({ reason: optionalReasonSchema.optional() }), false),
  },
  responses: { 200: json(actionResultSchema, 'Resent'), ...errors(400, 401, 403, 404, 409, 413, 415) },
});

export function outboxRoutes(app: OpenAPIHono<AppEnv>, { stores }: AppDeps): void {
  app.openapi(list, async (c) => {
    const { store, filter, page } = splitQuery(c.req.valid('query'));
    const entry = stores.get(store);
    const items = await asQuery(() => entry.read((service) => service.listOutbox(filter, page)));
    return c.json({ ...items, store: entry.name }, 200);
  });
  app.openapi(one, async (c) => {
    const entry = stores.get(c.req.valid('query').store);
    return c.json(await entry.read((service) => service.getOutbox(c.req.valid('param').messageId)), 200);
  });
  app.openapi(resend, async (c) => {
    const { service } = stores.get(c.req.valid('query').store);
    const { reason } = c.req.valid('json');
    return c.json(await service.resend(c.req.valid('param').messageId, c.get('actor'), reason), 200);
  });
}
