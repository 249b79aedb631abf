/**
 * Acceptance 2: unauthenticated requests get 401, a viewer's mutation 403, a forged cross-site
 * request is refused and changes nothing; secrets never appear in responses or logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp, type AdminAppOptions } from '../../src/admin/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { newToken, type ApiResponse } from '../support/admin-http.js';
import { startAdminFixture, type AdminFixture } from '../support/admin-fixture.js';
import { seedDeadLetters, seedOutbox, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';

const UUID = '0194b7a0-0000-7000-8000-000000000001';

describe('admin HTTP authentication and CSRF (SQLite)', () => {
  let fx: AdminFixture;
  let deadIds: number[];
  let messageId: string;
  const group = uniqueName('g');
  /** Session cookies and CSRF tokens handed out; API tokens are fx.tokens. */
  const cookies: string[] = [];
  const csrfTokens: string[] = [];

  beforeAll(async () => {
    fx = await startAdminFixture('sqlite');
    deadIds = (await seedDeadLetters(fx.store, 6, { group, status: 'dead' })).map((r) => r.id);
    messageId = (await seedOutbox(fx.store, 1))[0]!;
  });
  afterAll(async () => fx?.close());

  const statusOf = async (id: number) => (await fx.store.admin.getDeadLetterById(id))!.status;
  const auditCount = async () => (await fx.store.admin.listAudit({}, { limit: 500 })).items.length;

  /** Every route of the OpenAPI document with its path parameters filled in. */
  async function allRoutes(): Promise<{ method: string; path: string }[]> {
    const doc = (await fx.api.call('GET', '/api/openapi.json', { token: fx.tokens.viewer })).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({
        method: method.toUpperCase(),
        path: path.replace('{id}', String(deadIds[0])).replace('{messageId}', messageId),
      })),
    );
    expect(routes.length).toBeGreaterThan(15);
    // The document describes /metrics and itself too.
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: 'GET', path: '/metrics' },
        { method: 'GET', path: '/api/openapi.json' },
      ]),
    );
    return routes;
  }

  const PUBLIC = new Set(['GET /healthz', 'GET /readyz', 'POST /api/session']);

  it('answers 401 to every non-public route without a credential, and with a bad one', async () => {
    const before = await auditCount();
    const routes = (await allRoutes()).filter((r) => !PUBLIC.has(`${r.method} ${r.path}`));
    const credentials: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: 'Bearer not-a-token-of-this-server' },
      { authorization: `Basic ${Buffer.from(`alice:${fx.tokens.operator}`).toString('base64')}` },
      { cookie: 'surety_session=eyJuIjoiYWxpY2UifQ.forged' },
    ];
    for (const headers of credentials) {
      for (const r of routes) {
        const res = await fx.api.call(r.method, r.path, { headers, body: r.method === 'GET' ? undefined : {} });
        expect(res.status, `${r.method} ${r.path} with ${JSON.stringify(headers)}`).toBe(401);
        expect(res.body.error.code).toBe('SURETY_UNAUTHENTICATED');
        expect(res.headers.get('www-authenticate')).toContain('Bearer');
      }
    }
    // Also a path that does not exist: no probing without a credential.
    expect((await fx.api.call('GET', '/api/does-not-exist')).status).toBe(401);
    expect(await statusOf(deadIds[0]!)).toBe('dead');
    expect(await auditCount()).toBe(before);
  });

  it('serves health, readiness and the console files without a credential, and nothing else of the disk', async () => {
    expect((await fx.api.call('GET', '/healthz')).status).toBe(200);
    expect((await fx.api.call('GET', '/readyz')).body).toEqual({ status: 'ready' });
    const index = await fx.api.call('GET', '/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    expect((await fx.api.call('GET', '/app.js')).status).toBe(200);
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/.env', '/missing.js']) {
      expect((await fx.api.call('GET', path)).status, path).toBe(401);
    }
  });

  it("refuses a viewer's mutations with 403, audits the refusal and changes nothing", async () => {
    const id = deadIds[1]!;
    const mutations: [string, string, unknown][] = [
      ['POST', `/api/dead-letters/${id}/replay`, {}],
      ['POST', `/api/dead-letters/${id}/ignore`, { reason: 'not mine' }],
      ['POST', `/api/dead-letters/${id}/edit`, { body: '{}', reason: 'fix' }],
      ['POST', `/api/outbox/${messageId}/resend`, {}],
      ['POST', '/api/jobs', { kind: 'dlq.replay', filter: { group } }],
    ];
    for (const [method, path, body] of mutations) {
      const res = await fx.api.call(method, path, { token: fx.tokens.viewer, body });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('SURETY_FORBIDDEN');
      expect(res.body.error.message).toMatch(/operator role/);
    }
    expect(await statusOf(id)).toBe('dead');
    expect((await fx.store.admin.listJobs({ limit: 10 })).items).toHaveLength(0);
    expect((await fx.store.admin.lineage(messageId))!.outbox!.history).toHaveLength(0);
    const refused = (await fx.store.admin.listAudit({ actor: 'victor' }, { limit: 50 })).items;
    expect(refused.map((e) => [e.action, e.outcome]).sort()).toEqual(
      [
        ['dlq.edit', 'refused'],
        ['dlq.ignore', 'refused'],
        ['dlq.replay', 'refused'],
        ['job.create', 'refused'],
        ['outbox.resend', 'refused'],
      ].sort(),
    );
    // The viewer still reads.
    expect((await fx.api.call('GET', `/api/dead-letters/${id}`, { token: fx.tokens.viewer })).status).toBe(200);
  });

  async function login(token: string, headers: Record<string, string> = {}) {
    const res = await fx.api.call('POST', '/api/session', { body: { token }, headers });
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie')!;
    const cookie = setCookie.split(';')[0]!;
    cookies.push(cookie.split('=')[1]!);
    csrfTokens.push(res.body.csrfToken as string);
    return { res, setCookie, cookie, csrf: res.body.csrfToken as string };
  }

  it('sets an HttpOnly, SameSite=Strict session cookie and a CSRF token on login', async () => {
    const { res, setCookie, cookie } = await login(fx.tokens.operator);
    expect(res.body).toMatchObject({ actor: 'alice', role: 'operator' });
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);
    const me = await fx.api.call('GET', '/api/session', { headers: { cookie } });
    expect(me.body).toMatchObject({ actor: 'alice', role: 'operator', csrfToken: res.body.csrfToken });
    expect((await fx.api.call('POST', '/api/session', { body: { token: 'wrong-token-0000000000' } })).status).toBe(401);
  });

  it('refuses forged cross-site requests carrying the cookie, and changes nothing', async () => {
    const { cookie, csrf } = await login(fx.tokens.operator);
    const id = deadIds[2]!;
    const origin = new URL(fx.server.url).origin;
    const before = await auditCount();
    const forged: [string, Record<string, string>][] = [
      ['no CSRF token', { cookie, origin }],
      ['wrong CSRF token', { cookie, origin, 'x-csrf-token': 'guessed-value' }],
      ["another session's token", { cookie, origin, 'x-csrf-token': (await login(fx.tokens.operator)).csrf }],
      ['foreign Origin', { cookie, origin: 'https://evil.example', 'x-csrf-token': csrf }],
      ['null Origin', { cookie, origin: 'null', 'x-csrf-token': csrf }],
      ['cross-site fetch', { cookie, 'sec-fetch-site': 'cross-site', 'x-csrf-token': csrf }],
      ['same-site but not same-origin', { cookie, 'sec-fetch-site': 'same-site', 'x-csrf-token': csrf }],
      ['no Origin at all', { cookie, 'x-csrf-token': csrf }],
    ];
    for (const [what, headers] of forged) {
      const res: ApiResponse = await fx.api.call('POST', `/api/dead-letters/${id}/ignore`, {
        headers,
        body: { reason: 'forged' },
      });
      expect(res.status, what).toBe(403);
      expect(res.body.error.code).toBe('SURETY_FORBIDDEN');
      // Only a missing or stale CSRF token says so: the console reloads the session for it, and for nothing else.
      const csrfIssue = (res.body.error.issues ?? []).some((i: { path: string }) => i.path === 'header.x-csrf-token');
      expect(csrfIssue, what).toBe(/CSRF token|another session/.test(what));
    }
    // A form post (no JSON, no header) from another site: refused before the body is even read.
    const form = await fx.api.call('POST', `/api/dead-letters/${id}/replay`, {
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'reason=x',
    });
    expect(form.status).toBe(403);
    expect(await statusOf(id)).toBe('dead');
    expect(await auditCount()).toBe(before);
    // A forged login (logging the victim into the attacker's session) is refused too.
    const forgedLogin = await fx.api.call('POST', '/api/session', {
      body: { token: fx.tokens.viewer },
      headers: { origin: 'https://evil.example' },
    });
    expect(forgedLogin.status).toBe(403);

    // The same request from the console's own origin with the session's token works.
    const ok = await fx.api.call('POST', `/api/dead-letters/${id}/ignore`, {
      headers: { cookie, origin, 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrf },
      body: { reason: 'duplicate order' },
    });
    expect(ok.status).toBe(200);
    expect(await statusOf(id)).toBe('ignored');
    // Bearer requests need neither header: a browser cannot add Authorization to a forged request.
    const bearer = await fx.api.call('POST', `/api/dead-letters/${deadIds[3]}/replay`, { token: fx.tokens.operator });
    expect(bearer.status).toBe(200);
  });

  it('ends the session on logout and refuses a tampered or expired cookie', async () => {
    const { cookie, csrf } = await login(fx.tokens.viewer);
    const other = await login(fx.tokens.viewer);
    const origin = new URL(fx.server.url).origin;
    const [name, value] = cookie.split('=') as [string, string];
    const [body, sig] = value.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const promoted = Buffer.from(JSON.stringify({ ...payload, r: 'operator', n: 'alice' })).toString('base64url');
    expect(
      (await fx.api.call('GET', '/api/overview', { headers: { cookie: `${name}=${promoted}.${sig}` } })).status,
    ).toBe(401);
    const expired = Buffer.from(JSON.stringify({ ...payload, e: Date.now() - 1 })).toString('base64url');
    expect(
      (await fx.api.call('GET', '/api/overview', { headers: { cookie: `${name}=${expired}.${sig}` } })).status,
    ).toBe(401);
    expect((await fx.api.call('GET', '/api/overview', { headers: { cookie } })).status).toBe(200);
    const out = await fx.api.call('DELETE', '/api/session', { headers: { cookie, origin, 'x-csrf-token': csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    // A copy of the cookie kept after sign-out (another tab, a stolen one) no longer works.
    for (const path of ['/api/overview', '/api/session']) {
      const reused = await fx.api.call('GET', path, { headers: { cookie } });
      expect(reused.status, path).toBe(401);
      expect(reused.body.error.message).toMatch(/signed out/);
    }
    const again = await fx.api.call('DELETE', '/api/session', { headers: { cookie, origin, 'x-csrf-token': csrf } });
    expect(again.status).toBe(401);
    // The same person's other session is not affected.
    expect((await fx.api.call('GET', '/api/session', { headers: { cookie: other.cookie } })).status).toBe(200);
  });

  it('never puts a token, cookie or CSRF token in a response or a log line', async () => {
    // A few more requests whose errors could echo input.
    await fx.api.call('POST', '/api/session', { body: { token: `${fx.tokens.operator}x` } });
    await fx.api.call('GET', '/api/overview', { headers: { authorization: `Bearer ${fx.tokens.operator}x` } });
    await fx.api.call('GET', '/api/overview', { token: fx.tokens.viewer });
    const metrics = await fx.api.call('GET', '/metrics', { token: fx.tokens.viewer });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/surety_dead_letters\{status="dead",store="default"\}/);
    expect(fx.logs.length).toBeGreaterThan(10);
    expect(cookies.length).toBeGreaterThan(3);

    const apiTokens = [fx.tokens.operator, fx.tokens.viewer];
    for (const r of fx.api.seen) {
      for (const t of apiTokens) expect(r.text + r.headers, `${r.request} leaks an API token`).not.toContain(t);
      // The cookie reaches its owner only in Set-Cookie; the CSRF token only from the session endpoint.
      for (const c of cookies) expect(r.text, `${r.request} leaks a session cookie`).not.toContain(c);
      if (!r.request.endsWith(' /api/session')) {
        for (const t of csrfTokens) expect(r.text + r.headers, `${r.request} leaks a CSRF token`).not.toContain(t);
      }
    }
    const logs = fx.logs.join('\n');
    for (const secret of [...apiTokens, ...cookies, ...csrfTokens]) expect(logs.includes(secret)).toBe(false);
    expect(logs).not.toMatch(/authorization|cookie|x-csrf-token|bearer/i);
  });

  it('refuses what is not a known route once authenticated', async () => {
    const res = await fx.api.call('GET', `/api/messages/${UUID}/lineage`, { token: fx.tokens.viewer });
    expect(res.status).toBe(404);
  });
});

describe('the session cookie is Secure over HTTPS (SQLite)', () => {
  let f: StoreFixture;
  const token = newToken('ops');
  beforeAll(async () => {
    f = await storeFixtures.sqlite('admin_secure');
  });
  afterAll(async () => f?.teardown());

  /** The Set-Cookie of a login through `url` with `headers`, from an app built with `options`. */
  async function cookieOf(options: Partial<AdminAppOptions>, url: string, headers: Record<string, string> = {}) {
    const admin = createAdminApp({
      store: f.store as AdminTestStore,
      tokens: [{ name: 'ops', role: 'operator', token }],
      consoleDir: false,
      jobs: { enabled: false },
      ...options,
    });
    try {
      const res = await admin.fetch(
        new Request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ token }),
        }),
      );
      expect(res.status).toBe(200);
      const set = res.headers.get('set-cookie')!;
      const out = await admin.fetch(
        new Request(url, { method: 'DELETE', headers: { ...headers, authorization: `Bearer ${token}` } }),
      );
      return { login: set, logout: out.headers.get('set-cookie') ?? '' };
    } finally {
      await admin.close();
    }
  }
  const secure = (setCookie: string) => /;\s*Secure(;|$)/i.test(setCookie);

  it('is Secure when the request came over HTTPS', async () => {
    expect(secure((await cookieOf({}, 'https://ops.example/api/session')).login)).toBe(true);
    expect(secure((await cookieOf({}, 'http://ops.example/api/session')).login)).toBe(false);
  });

  it("believes a proxy's X-Forwarded-Proto only with trustProxy", async () => {
    const https = { 'x-forwarded-proto': 'https' };
    expect(secure((await cookieOf({}, 'http://10.0.0.5/api/session', https)).login)).toBe(false);
    const trusted = await cookieOf({ trustProxy: true }, 'http://10.0.0.5/api/session', https);
    expect(secure(trusted.login)).toBe(true);
    expect(secure(trusted.logout)).toBe(true);
    // The proxy nearest the browser comes first.
    const chain = { 'x-forwarded-proto': 'https, http' };
    expect(secure((await cookieOf({ trustProxy: true }, 'http://10.0.0.5/api/session', chain)).login)).toBe(true);
    const plain = { 'x-forwarded-proto': 'http' };
    expect(secure((await cookieOf({ trustProxy: true }, 'http://10.0.0.5/api/session', plain)).login)).toBe(false);
  });

  it('follows an explicit cookieSecure either way', async () => {
    expect(secure((await cookieOf({ cookieSecure: true }, 'http://127.0.0.1/api/session')).login)).toBe(true);
    const off = await cookieOf({ cookieSecure: false, trustProxy: true }, 'https://ops.example/api/session', {
      'x-forwarded-proto': 'https',
    });
    expect(secure(off.login)).toBe(false);
  });
});
