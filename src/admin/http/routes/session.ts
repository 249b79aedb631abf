import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { deleteCookie, setCookie } from 'hono/cookie';
import { ForbiddenError, UnauthenticatedError } from '../../admin-errors.js';
import { crossSiteReason } from '../../auth/same-origin.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { originHeaders } from '../authenticate.js';
import { sessionCookieOptions } from '../cookie-options.js';
import { errors, json, jsonBody } from '../schemas/common.js';

const sessionSchema = z
  .object({
    actor: z.string(),
    role: z.enum(['viewer', 'operator']),
    csrfToken: z
      .string()
      .nullable()
      .openapi({ description: 'send as X-CSRF-Token with every change; null for bearer' }),
    expiresAt: z.number().int().nullable(),
    allowEdit: z.boolean(),
    inboxWindowMs: z.number().int().nullable(),
  })
  .openapi('Session');

const login = createRoute({
  method: 'post',
  path: '/api/session',
  tags: ['session'],
  summary: 'Log in with an API token: sets the session cookie (HttpOnly, SameSite=Strict, Secure over HTTPS)',
  security: [],
  request: {
    body: jsonBody(z.strictObject({ token: z.string({ error: 'is required' }).min(1, 'is required').max(4096) }), true),
  },
  responses: { 200: json(sessionSchema, 'Logged in'), ...errors(400, 401, 403, 413, 415) },
});

const whoami = createRoute({
  method: 'get',
  path: '/api/session',
  tags: ['session'],
  summary: 'Who am I',
  responses: { 200: json(sessionSchema, 'The caller'), ...errors(401) },
});

const logout = createRoute({
  method: 'delete',
  path: '/api/session',
  tags: ['session'],
  summary: 'Log out: ends the session (its cookie stops working at once) and clears the cookie',
  responses: { 204: { description: 'Logged out' }, ...errors(401, 403) },
});

export function sessionRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { options, tokens, sessions, revocations, cookieName } = deps;
  const common = { allowEdit: options.allowEdit, inboxWindowMs: options.inboxWindowMs ?? null };

  app.openapi(login, (c) => {
    // A forged login would sign the victim into the attacker's account: same origin rules as changes.
    const h = originHeaders(c);
    const crossSite =
      h.origin === undefined && h.secFetchSite === undefined ? undefined : crossSiteReason(h, options.allowedOrigins);
    if (crossSite) throw new ForbiddenError(crossSite);
    const actor = tokens.verify(c.req.valid('json').token);
    if (!actor) {
      options.logger.warn({}, 'admin login refused: unknown token');
      throw new UnauthenticatedError('the token is not valid');
    }
    const { value, session } = sessions.issue(actor, options.clock.now(), options.sessionTtlMs);
    setCookie(c, cookieName, value, {
      ...sessionCookieOptions(c, options),
      maxAge: Math.floor(options.sessionTtlMs / 1000),
    });
    options.logger.info({ actor: actor.name, role: actor.role }, 'admin login');
    return c.json(
      {
        actor: session.name,
        role: session.role,
        csrfToken: session.csrfToken,
        expiresAt: session.expiresAt,
        ...common,
      },
      200,
    );
  });

  app.openapi(whoami, (c) => {
    const actor = c.get('actor');
    const session = c.get('session');
    return c.json(
      {
        actor: actor.name,
        role: actor.role,
        csrfToken: session?.csrfToken ?? null,
        expiresAt: session?.expiresAt ?? null,
        ...common,
      },
      200,
    );
  });

  app.openapi(logout, (c) => {
    const session = c.get('session');
    if (session) {
      // A copy of the cookie (another tab, a stolen one) must not outlive the sign-out.
      revocations.revoke(session.id, session.expiresAt, options.clock.now());
      options.logger.info({ actor: session.name }, 'admin logout');
    }
    deleteCookie(c, cookieName, sessionCookieOptions(c, options));
    return c.body(null, 204);
  });
}
