import type { IncomingMessage, ServerResponse } from 'node:http';
import { OpenAPIHono } from '@hono/zod-openapi';
import { getRequestListener } from '@hono/node-server';
import { getPath } from 'hono/utils/url';
import { Registry } from 'prom-client';
import type { Logger } from '../../core/logger.js';
import { parseOptions } from '../../core/options.js';
import { AdminService } from '../admin-service.js';
import { NotFoundError } from '../admin-errors.js';
import { SessionCodec } from '../auth/session-cookie.js';
import { SessionRevocations } from '../auth/session-revocations.js';
import { TokenSet } from '../auth/token-set.js';
import { JobRunner } from '../jobs/job-runner.js';
import { SharedRead } from '../shared-read.js';
import { DEFAULT_STORE_NAME } from '../../ports/store-name.js';
import { dialectOf, StoreDirectory, type StoreEntry } from '../store-directory.js';
import { registerAdminMetrics } from './admin-metrics.js';
import type { AppDeps, AppEnv } from './app-env.js';
import { appOptionsSchema, type AdminAppOptions, type ParsedAppOptions } from './app-options.js';
import { authenticate } from './authenticate.js';
import { bodyGuard, bodyLimit } from './body-guard.js';
import { consoleRedirect, mountedListener } from './base-path.js';
import { errorResponse, validationHook } from './error-response.js';
import { requestLog } from './request-log.js';
import { auditRoutes } from './routes/audit.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { messageRoutes } from './routes/messages.js';
import { metricsRoutes } from './routes/metrics.js';
import { outboxRoutes } from './routes/outbox.js';
import { overviewRoutes } from './routes/overview.js';
import { sessionRoutes } from './routes/session.js';
import { storeRoutes } from './routes/stores.js';
import { securityHeaders } from './security-headers.js';
import { defaultConsoleDir, staticConsole } from './static-console.js';

export type { AdminAppOptions } from './app-options.js';

export interface AdminApp {
  /** The app as a fetch handler (Request -> Response), for runtimes and tests. */
  fetch(request: Request): Promise<Response>;
  /**
   * A node:http request listener; mount it in `http.createServer`, or in express/connect under
   * `basePath` (it routes by `req.originalUrl`, the path before the framework stripped the prefix).
   */
  listener(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The default (first) store's service and job runner (its actions and reads are not limited nor cached). */
  readonly service: AdminService;
  readonly jobs: JobRunner;
  /** Every store served, each with its own service and job runner. */
  readonly stores: StoreDirectory;
  /** Stops the job runners (held jobs resume elsewhere when their lease expires). The stores stay open. */
  close(): Promise<void>;
}

/**
 * The admin HTTP API and console as a Hono app: JSON endpoints described by the OpenAPI document
 * at `/api/openapi.json`, Prometheus metrics, health and readiness, the console's static files, and
 * a bulk-job runner per store. Give one `store`, or several `stores` by name (the console follows a
 * message across them; requests pick one with `?store=`). Mount `listener` in an existing server,
 * or use {@link startAdminServer}. Mounted under a prefix, give that prefix as `basePath`: the
 * session cookie is scoped to it, and the console redirects there.
 * @example
 * const tokens = [{ name: 'ops', role: 'operator' as const, token: process.env.OPS_TOKEN! }];
 * const admin = createAdminApp({ store, tokens, basePath: '/surety' });
 * expressApp.use('/surety', admin.listener); // before any body parser; the cookie gets Path=/surety
 * // One console over the order service's database and billing's:
 * createAdminApp({ stores: { orders: ordersStore, billing: billingStore }, tokens });
 */
export function createAdminApp(options: AdminAppOptions): AdminApp {
  const o = parseOptions(appOptionsSchema, options, 'admin');
  const { logger, clock } = o;
  const stores = new StoreDirectory(storeEntries(o), {
    timeoutMs: o.storeTimeoutMs,
    overviewTtlMs: o.cache.overviewMs,
    readinessTtlMs: o.cache.readinessMs,
    maxConcurrentReads: o.maxConcurrentReads,
    clock,
    logger,
  });
  const registry = o.registry ?? new Registry();
  const requests = registerAdminMetrics(registry, stores.entries, clock);
  const doctor = o.doctor;
  const deps: AppDeps = {
    options: o,
    stores,
    tokens: new TokenSet(o.tokens),
    sessions: new SessionCodec(o.sessionSecret),
    revocations: new SessionRevocations(),
    // The doctor probes every store and the broker: one run serves every console for cache.doctorMs.
    doctor: doctor && new SharedRead(() => doctor(), { ttlMs: o.cache.doctorMs, clock }),
    registry,
    cookieName: 'surety_session',
  };

  const base = o.basePath;
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: validationHook,
    // Routed with or without the prefix: a proxy may strip it. Console pages without it are redirected under it.
    getPath: (req) => {
      const path = getPath(req);
      return base && (path === base || path.startsWith(`${base}/`)) ? path.slice(base.length) || '/' : path;
    },
  });
  app.onError((err, c) => errorResponse(c, err, logger));
  app.notFound((c) => errorResponse(c, new NotFoundError('no such endpoint'), logger));
  app.use('*', requestLog(logger, requests));
  app.use('*', securityHeaders);
  const consoleDir = o.consoleDir === false ? undefined : (o.consoleDir ?? defaultConsoleDir());
  if (base) app.use('*', consoleRedirect(base, consoleDir !== undefined));
  app.use('*', staticConsole(consoleDir));
  app.use('*', authenticate(deps));
  app.use('*', bodyGuard(bodyLimit(o.maxBodyBytes)));

  healthRoutes(app, deps);
  sessionRoutes(app, deps);
  overviewRoutes(app, deps);
  outboxRoutes(app, deps);
  deadLetterRoutes(app, deps);
  messageRoutes(app, deps);
  jobRoutes(app, deps);
  auditRoutes(app, deps);
  storeRoutes(app, deps);
  metricsRoutes(app, deps);

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

  if (o.jobs.enabled) for (const e of stores.entries) e.jobs.start();
  const fetch = async (request: Request) => app.fetch(request);
  return {
    fetch,
    listener: mountedListener(getRequestListener(fetch, { overrideGlobalObjects: false }), base, logger),
    service: stores.default.service,
    jobs: stores.default.jobs,
    stores,
    close: async () => {
      await Promise.all(stores.entries.map((e) => e.jobs.stop()));
    },
  };
}

/** One service and one job runner per store; a new job wakes its own store's runner. */
function storeEntries(o: ParsedAppOptions): StoreEntry[] {
  const named = o.stores ? Object.entries(o.stores) : [[DEFAULT_STORE_NAME, o.store!] as const];
  const { enabled: _enabled, ...jobOptions } = o.jobs;
  return named.map(([name, store]) => {
    const logger = named.length > 1 ? withStore(o.logger, name) : o.logger;
    const jobs = new JobRunner({ ...jobOptions, store, clock: o.clock, logger });
    const service = new AdminService({
      store,
      clock: o.clock,
      logger,
      allowEdit: o.allowEdit,
      inboxWindowMs: o.inboxWindowMs,
      maxJobRatePerSecond: o.maxJobRatePerSecond,
      onJobCreated: () => jobs.wake(),
    });
    return { name, dialect: dialectOf(store), store, service, jobs };
  });
}

/** Log lines of one store's service and runner name the store. */
function withStore(logger: Logger, store: string): Logger {
  const tag =
    (level: keyof Logger) =>
    (obj: object, msg?: string): void =>
      logger[level]({ store, ...obj }, msg);
  return { debug: tag('debug'), info: tag('info'), warn: tag('warn'), error: tag('error') };
}
