import type { Context } from 'hono';
import type { CookieOptions } from 'hono/utils/cookie';
import type { ParsedAppOptions } from './app-options.js';

/** Whether the browser reached us over HTTPS: the request's own scheme, or a trusted proxy's X-Forwarded-Proto. */
export function isHttps(c: Context, trustProxy: boolean): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  if (!trustProxy) return false;
  // The first value is what the proxy nearest the browser saw.
  const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https';
}

/**
 * The session cookie's attributes: HttpOnly, SameSite=Strict, scoped to the base path, and Secure
 * when `cookieSecure` says so or, unset, when the request came over HTTPS.
 */
export function sessionCookieOptions(c: Context, options: ParsedAppOptions): CookieOptions {
  return {
    path: options.basePath || '/',
    httpOnly: true,
    sameSite: 'Strict',
    secure: options.cookieSecure ?? isHttps(c, options.trustProxy),
  };
}
