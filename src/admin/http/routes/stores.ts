import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../app-env.js';
import { errors, json } from '../schemas/common.js';
import { storeListSchema } from '../schemas/rows.js';

const list = createRoute({
  method: 'get',
  path: '/api/stores',
  tags: ['stores'],
  summary: 'The stores this server serves, in display order; pass a name as `store` to the other routes',
  responses: { 200: json(storeListSchema, 'The stores'), ...errors(401) },
});

export function storeRoutes(app: OpenAPIHono<AppEnv>, { stores }: AppDeps): void {
  app.openapi(list, (c) => c.json({ stores: stores.list() }, 200));
}
