import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../app-env.js';
import { json } from '../schemas/common.js';

const status = (example: string) => z.object({ status: z.string().openapi({ example }) });

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['health'],
  summary: 'The process is up (no credential needed)',
  responses: { 200: json(status('ok'), 'Up') },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags: ['health'],
  summary: "Every store's database answers (no credential needed)",
  responses: {
    200: json(status('ready'), 'Ready'),
    503: json(status('unavailable'), 'A database does not answer'),
  },
});

export function healthRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(healthz, (c) => c.json({ status: 'ok' }, 200));
  // Unauthenticated and polled by every probe: answered from a shared check at most cache.readinessMs old.
  app.openapi(readyz, async (c) =>
    (await deps.stores.ready()) ? c.json({ status: 'ready' }, 200) : c.json({ status: 'unavailable' }, 503),
  );
}
