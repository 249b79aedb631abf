import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../app-env.js';
import { errors, json, pageOf } from '../schemas/common.js';
import { asQuery, auditQuerySchema, splitQuery } from '../schemas/queries.js';
import { auditEntrySchema } from '../schemas/rows.js';

const list = createRoute({
  method: 'get',
  path: '/api/audit',
  tags: ['audit'],
  summary: 'Operator actions, newest first: who, when, what, why, outcome',
  request: { query: auditQuerySchema },
  responses: { 200: json(pageOf(auditEntrySchema, 'AuditPage'), 'A page of entries'), ...errors(400, 401) },
});

export function auditRoutes(app: OpenAPIHono<AppEnv>, { stores }: AppDeps): void {
  app.openapi(list, async (c) => {
    const { store, filter, page } = splitQuery(c.req.valid('query'));
    const entry = stores.get(store);
    const items = await asQuery(() => entry.read((service) => service.listAudit(filter, page)));
    return c.json({ ...items, store: entry.name }, 200);
  });
}
