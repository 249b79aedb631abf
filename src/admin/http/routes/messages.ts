import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../app-env.js';
import { errors, json, messageIdParams } from '../schemas/common.js';
import { lineageSchema } from '../schemas/rows.js';

const lineage = createRoute({
  method: 'get',
  path: '/api/messages/{messageId}/lineage',
  tags: ['messages'],
  summary:
    'Where a message is, across every store: its outbox row and attempts, the inboxes holding it, its dead letters',
  request: { params: messageIdParams },
  responses: { 200: json(lineageSchema, 'The lineage'), ...errors(400, 401, 404, 503) },
});

export function messageRoutes(app: OpenAPIHono<AppEnv>, { stores }: AppDeps): void {
  app.openapi(lineage, async (c) => c.json(await stores.lineage(c.req.valid('param').messageId), 200));
}
