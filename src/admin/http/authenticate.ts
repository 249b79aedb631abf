import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import { AdminError, ForbiddenError, UnauthenticatedError } from '../admin-errors.js';
import { crossSiteReason } from '../auth/same-origin.js';
import { safeEqual } from '../auth/session-cookie.js';
import type { AppDeps, AppEnv } from './app-env.js';
import { sessionCookieOptions } from './cookie-options.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The issue path a 403 names when the CSRF token is missing or not the session's, e.g. because
 * another tab signed in and replaced the cookie: the console then reloads the session and retries.
 */
export const CSRF_ISSUE_PATH = 'header.x-csrf-token';

/** Requests served without a credential: health, readiness and logging in. The console's files are served before this. */
export function isPublic(method: string, path: string): boolean {
  return (
    ((method === 'GET' || method === 'HEAD') && (path === '/healthz' || path === '/readyz')) ||
    (method === 'POST' && path === '/api/session')
  );
}

/** The request's origin headers, for the cross-site check. */
export function originHeaders(c: Context) {
  return {
    origin: c.req.header('origin'),
    secFetchSite: c.req.header('sec-fetch-site'),
    host: c.req.header('host'),
  };
}

/**
 * Who is asking: a bearer token, or the session cookie. A change made with the cookie must carry the
 * session's CSRF token and come from the console's own origin; a bearer request needs neither (a
 * browser never adds that header by itself, so a forged request cannot carry it).
 */
export function authenticate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const { tokens, sessions, revocations, options, cookieName } = deps;
  return async (c, next) => {
    if (isPublic(c.req.method, c.req.path)) return next();
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const bearer = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization)?.[1];
      if (!bearer) throw new UnauthenticatedError('the Authorization header must be "Bearer <token>"');
      const actor = tokens.verify(bearer);
      if (!actor) throw new UnauthenticatedError('the bearer token is not valid');
      c.set('actor', { name: actor.name, role: actor.role });
      c.set('session', undefined);
      return next();
    }
    const cookie = getCookie(c, cookieName);
    if (!cookie) throw new UnauthenticatedError();
    const now = options.clock.now();
    const session = sessions.verify(cookie, now, (name) => tokens.byName(name));
    if (!session || revocations.isRevoked(session.id, now)) {
      deleteCookie(c, cookieName, sessionCookieOptions(c, options));
      throw new UnauthenticatedError(
        session ? 'the session was signed out; log in again' : 'the session has expired or is not valid; log in again',
      );
    }
    if (!SAFE_METHODS.has(c.req.method)) {
      const csrf = c.req.header('x-csrf-token');
      if (!csrf || !safeEqual(csrf, session.csrfToken)) {
        options.logger.warn({ path: c.req.path, actor: session.name }, 'admin request refused: CSRF token');
        throw new AdminError(
          'SURETY_FORBIDDEN',
          'a change made with the session cookie needs the X-CSRF-Token header of the session',
          { issues: [{ path: CSRF_ISSUE_PATH, message: csrf ? "is not this session's" : 'is required' }] },
        );
      }
      const crossSite = crossSiteReason(originHeaders(c), options.allowedOrigins);
      if (crossSite) {
        options.logger.warn({ path: c.req.path, actor: session.name }, 'admin request refused: cross-site');
        throw new ForbiddenError(crossSite);
      }
    }
    c.set('actor', { name: session.name, role: session.role });
    c.set('session', session);
    return next();
  };
}
