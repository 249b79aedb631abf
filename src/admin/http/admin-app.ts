import type { IncomingMessage, ServerResponse } from 'node:http';
import { OpenAPIHono } from '@hono/zod-openapi';
import { getRequestListener } from '@hono/node-server';
import { getPath } from 'hono/utils/url';
import { Registry } from 'prom-client';
import { parseOptions } from '../../core/options.js';
import { AdminService } from '../admin-service.js';
import { NotFoundError } from '../admin-errors.js';
import { SessionCodec } from '../auth/session-cookie.js';
import { TokenSet } from '../auth/token-set.js';
import { JobRunner } from '../jobs/job-runner.js';
import { registerAdminMetrics } from './admin-metrics.js';
import type { AppDeps, AppEnv } from './app-env.js';
import { appOptionsSchema, type AdminAppOptions } from './app-options.js';
import { authenticate } from './authenticate.js';
import { bodyGuard } from './body-guard.js';
import { errorResponse, validationHook } from './error-response.js';
import { requestLog } from './request-log.js';
import { auditRoutes } from './routes/audit.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { messageRoutes } from './routes/messages.js';
import { outboxRoutes } from './routes/outbox.js';
import { overviewRoutes } from './routes/overview.js';
import { sessionRoutes } from './routes/session.js';
import { securityHeaders } from './security-headers.js';
import { defaultConsoleDir, staticConsole } from './static-console.js';

export type { AdminAppOptions } from './app-options.js';

export interface AdminApp {
  /** The app as a fetch handler (Request -> Response), for runtimes and tests. */
  fetch(request: Request): Promise<Response>;
  /** A node:http request listener; mount it in `http.createServer`, or in express/connect under a prefix. */
  listener(req: IncomingMessage, res: ServerResponse): Promise<void>;
  readonly service: AdminService;
  readonly jobs: JobRunner;
  /** Stops the job runner (held jobs resume elsewhere when their lease expires). The store stays open. */
  close(): Promise<void>;
}

/**
 * The admin HTTP API and console as a Hono app: JSON endpoints described by the OpenAPI document
 * at `/api/openapi.json`, Prometheus metrics, health and readiness, the console's static files, and
 * a bulk-job runner. Mount `listener` in an existing server, or use {@link startAdminServer}.
 * @example
 * const admin = createAdminApp({ store, tokens: [{ name: 'ops', role: 'operator', token: process.env.OPS_TOKEN! }] });
 * expressApp.use('/surety', admin.listener); // before any body parser
 */
export function createAdminApp(options: AdminAppOptions): AdminApp {
  const o = parseOptions(appOptionsSchema, options, 'admin');
  const { store, logger, clock } = o;
  const registry = o.registry ?? new Registry();
  const requests = registerAdminMetrics(registry, store, clock);
  const { enabled: runJobs, ...jobOptions } = o.jobs;
  const jobs = new JobRunner({ ...jobOptions, store, clock, logger });
  const service = new AdminService({
    store,
    clock,
    logger,
    allowEdit: o.allowEdit,
    inboxWindowMs: o.inboxWindowMs,
    maxJobRatePerSecond: o.maxJobRatePerSecond,
    onJobCreated: () => jobs.wake(),
  });
  const deps: AppDeps = {
    options: o,
    service,
    tokens: new TokenSet(o.tokens),
    sessions: new SessionCodec(o.sessionSecret),
    registry,
    cookieName: 'surety_session',
  };

  const base = o.basePath;
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: validationHook,
    // Routed with or without the prefix: node:http passes the full path, express strips its mount path.
    getPath: (req) => {
      const path = getPath(req);
      return base && (path === base || path.startsWith(`${base}/`)) ? path.slice(base.length) || '/' : path;
    },
  });
  app.onError((err, c) => errorResponse(c, err, logger));
  app.notFound((c) => errorResponse(c, new NotFoundError('no such endpoint'), logger));
  app.use('*', requestLog(logger, requests));
  app.use('*', securityHeaders);
  if (base) {
    // The console's relative links need the trailing slash.
    app.use('*', async (c, next) => (new URL(c.req.url).pathname === base ? c.redirect(`${base}/`, 308) : next()));
  }
  app.use('*', staticConsole(o.consoleDir === false ? undefined : (o.consoleDir ?? defaultConsoleDir())));
  app.use('*', authenticate(deps));
  app.use('*', bodyGuard(o.maxBodyBytes));

  healthRoutes(app, deps);
  sessionRoutes(app, deps);
  overviewRoutes(app, deps);
  outboxRoutes(app, deps);
  deadLetterRoutes(app, deps);
  messageRoutes(app, deps);
  jobRoutes(app, deps);
  auditRoutes(app, deps);
  app.get('/metrics', async (c) => c.body(await registry.metrics(), 200, { 'Content-Type': registry.contentType }));

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'session', {
    type: 'apiKey',
    in: 'cookie',
    name: deps.cookieName,
    description: 'set by POST /api/session; changes also need the X-CSRF-Token header',
  });
  app.doc('/api/openapi.json', {
    openapi: '3.0.3',
    info: { title: 'Surety admin API', version: '1', description: 'Find a stuck message and fix it.' },
    servers: [{ url: base || '/' }],
    security: [{ bearer: [] }, { session: [] }],
  });

  if (runJobs) jobs.start();
  const fetch = async (request: Request) => app.fetch(request);
  return {
    fetch,
    listener: getRequestListener(fetch, { overrideGlobalObjects: false }),
    service,
    jobs,
    close: () => jobs.stop(),
  };
}
