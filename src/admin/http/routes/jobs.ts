import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { jobInputSchema, optionalReasonSchema } from '../../admin-schemas.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { actionResultSchema, errors, idParams, json, jsonBody, pageOf } from '../schemas/common.js';
import { asQuery, jobsQuerySchema, splitQuery, storeQuerySchema } from '../schemas/queries.js';
import { jobSchema } from '../schemas/rows.js';

const ACTION_ERRORS = errors(400, 401, 403, 404, 409, 413, 415);

export function jobRoutes(app: OpenAPIHono<AppEnv>, { stores, options }: AppDeps): void {
  const create = createRoute({
    method: 'post',
    path: '/api/jobs',
    tags: ['jobs'],
    summary: 'Start a bulk action over the rows matching a filter; poll the job for progress',
    request: { query: storeQuerySchema, body: jsonBody(jobInputSchema(options.maxJobRatePerSecond), true) },
    responses: {
      202: json(actionResultSchema.extend({ job: jobSchema }).openapi('JobCreated'), 'Started'),
      ...ACTION_ERRORS,
    },
  });
  const list = createRoute({
    method: 'get',
    path: '/api/jobs',
    tags: ['jobs'],
    summary: 'Bulk jobs, newest first',
    request: { query: jobsQuerySchema },
    responses: { 200: json(pageOf(jobSchema, 'JobPage'), 'A page of jobs'), ...errors(400, 401) },
  });
  const one = createRoute({
    method: 'get',
    path: '/api/jobs/{id}',
    tags: ['jobs'],
    summary: "A job's progress: total, done, changed, status",
    request: { params: idParams, query: storeQuerySchema },
    responses: { 200: json(jobSchema, 'The job'), ...errors(400, 401, 404) },
  });
  const cancel = createRoute({
    method: 'post',
    path: '/api/jobs/{id}/cancel',
    tags: ['jobs'],
    summary: 'Stop a running job after its current batch',
    request: {
      params: idParams,
      query: storeQuerySchema,
      body: jsonBody(z.strictObject({ reason: optionalReasonSchema.optional() }), false),
    },
    responses: { 200: json(actionResultSchema, 'Cancelled'), ...ACTION_ERRORS },
  });

  app.openapi(create, async (c) => {
    const { service } = stores.get(c.req.valid('query').store);
    return c.json(await service.createJob(c.get('actor'), c.req.valid('json')), 202);
  });
  app.openapi(list, async (c) => {
    const { store, page } = splitQuery(c.req.valid('query'));
    const entry = stores.get(store);
    const items = await asQuery(() => entry.read((service) => service.listJobs(page)));
    return c.json({ ...items, store: entry.name }, 200);
  });
  app.openapi(one, async (c) => {
    const entry = stores.get(c.req.valid('query').store);
    return c.json(await entry.read((service) => service.getJob(c.req.valid('param').id)), 200);
  });
  app.openapi(cancel, async (c) => {
    const { service } = stores.get(c.req.valid('query').store);
    const { reason } = c.req.valid('json');
    return c.json(await service.cancelJob(c.req.valid('param').id, c.get('actor'), reason), 200);
  });
}
