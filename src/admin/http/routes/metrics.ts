import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { AppDeps, AppEnv } from '../app-env.js';
import { errors } from '../schemas/common.js';

const metrics = createRoute({
  method: 'get',
  path: '/metrics',
  tags: ['metrics'],
  summary: "Prometheus metrics: the stores' gauges, the admin API's requests, and every registry given",
  responses: {
    200: {
      content: {
        'text/plain': {
          schema: z.string().openapi({ example: 'surety_outbox_rows{status="pending",store="default"} 3' }),
        },
      },
      description: 'Prometheus text exposition format (version 0.0.4)',
    },
    ...errors(401),
  },
});

/** `/metrics`, and this document's own entry (served by `app.doc`, which does not describe itself). */
export function metricsRoutes(app: OpenAPIHono<AppEnv>, { registry, options }: AppDeps): void {
  const all = [...new Set([registry, ...options.registries])]; // a registry given twice is served once
  app.openapi(metrics, async (c) => {
    const scraped = await scrape(all);
    return c.text(scraped.text, 200, { 'Content-Type': scraped.contentType });
  });
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/openapi.json',
    tags: ['meta'],
    summary: 'This document: the admin API in OpenAPI 3.0',
    responses: {
      200: {
        content: { 'application/json': { schema: z.object({ openapi: z.string() }).passthrough() } },
        description: 'The OpenAPI document',
      },
      ...errors(401),
    },
  });
}

/**
 * One exposition of several registries. Metrics of the same name are added up by label set, as
 * prom-client does for cluster workers: consumers with registries of their own each label theirs
 * with their group, so their series stay apart.
 */
async function scrape(registries: readonly Registry[]): Promise<{ text: string; contentType: string }> {
  if (registries.length === 1) {
    const [only] = registries as [Registry];
    return { text: await only.metrics(), contentType: only.contentType };
  }
  const merged = AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON())));
  return { text: await merged.metrics(), contentType: merged.contentType };
}
