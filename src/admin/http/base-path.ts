import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../core/logger.js';
import { NOT_CONSOLE } from './static-console.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Whether `path` is `base` or below it. */
const under = (path: string, base: string) => path === base || path.startsWith(`${base}/`);

/**
 * Keeps the console under `basePath`, where its session cookie is scoped: the bare prefix gets its
 * trailing slash (the console's links are relative), and a console path requested without the
 * prefix is redirected under it, since the cookie would not reach the API from there. A proxy that
 * strips the prefix says so with `X-Forwarded-Prefix` (the browser's address has it: no redirect).
 */
export function consoleRedirect(base: string, hasConsole: boolean): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    if (url.pathname === base) return c.redirect(`${base}/${url.search}`, 308);
    const method = c.req.method;
    if (!hasConsole || (method !== 'GET' && method !== 'HEAD') || under(url.pathname, base)) return next();
    if (NOT_CONSOLE.test(url.pathname)) return next();
    if (c.req.header('x-forwarded-prefix')?.replace(/\/+$/, '') === base) return next();
    return c.redirect(`${base}${url.pathname}${url.search}`, 308);
  };
}

/**
 * The node listener, as mounted in a framework. Express and connect strip the mount path from
 * `req.url` and keep the full one in `req.originalUrl`: the app routes by the full one when it lies
 * under `basePath`. Mounted under any other prefix, the app still answers, but warns once that the
 * session cookie's path (basePath) does not match where the browser sees the console.
 */
export function mountedListener(listener: Listener, base: string, logger: Logger): Listener {
  let warned = false;
  return async (req, res) => {
    const original = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
    if (typeof original === 'string' && req.url !== undefined && original !== req.url) {
      if (base && under(original.split('?')[0]!, base)) {
        req.url = original;
      } else if (!warned) {
        warned = true;
        logger.warn(
          { basePath: base || '(none)' },
          'admin app mounted under a path prefix other than basePath: set basePath to the mount path, or the session cookie does not fit the console',
        );
      }
    }
    return listener(req, res);
  };
}
