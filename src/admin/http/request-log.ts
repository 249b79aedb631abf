import type { MiddlewareHandler } from 'hono';
import type { Counter } from 'prom-client';
import type { Logger } from '../../core/logger.js';
import type { AppEnv } from './app-env.js';

/**
 * Counts and logs every request: method, route, status, duration and the actor's name. Headers,
 * cookies, bodies and query values are never logged (they may carry credentials or personal data).
 */
export function requestLog(
  logger: Logger,
  requests: Counter<'method' | 'route' | 'status'>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const status = c.res.status;
    const route = c.req.routePath;
    requests.inc({ method: c.req.method, route, status: String(status) });
    const entry = {
      method: c.req.method,
      route,
      status,
      ms: Math.round(performance.now() - started),
      actor: c.get('actor')?.name,
    };
    if (status >= 500) logger.error(entry, 'admin request failed');
    else logger.debug(entry, 'admin request');
  };
}
