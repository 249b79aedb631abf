import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../admin-errors.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { errors, json } from '../schemas/common.js';
import { overviewSchema } from '../schemas/rows.js';

const overview = createRoute({
  method: 'get',
  path: '/api/overview',
  tags: ['overview'],
  summary:
    'Counts on each side, oldest pending age, throughput, dead letters grouped by error, relays: every store merged, and each store',
  responses: { 200: json(overviewSchema, 'The overview'), ...errors(401, 503) },
});

const doctor = createRoute({
  method: 'get',
  path: '/api/doctor',
  tags: ['overview'],
  summary: "The doctor's report: where messages may be stuck, with a verdict",
  responses: {
    200: json(z.record(z.string(), z.unknown()).openapi('DoctorReport'), 'The report'),
    ...errors(401, 404),
  },
});

export function overviewRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  // Both are polled by every open console: answered from shared reads (cache.overviewMs, cache.doctorMs).
  app.openapi(overview, async (c) => c.json(await deps.stores.overview(), 200));
  app.openapi(doctor, async (c) => {
    if (!deps.doctor) throw new NotFoundError('the doctor is not configured on this server');
    return c.json((await deps.doctor.get()) as Record<string, unknown>, 200);
  });
}
