/** The admin app mounted in an existing node:http server under a prefix, as-is and prefix-stripped (express/connect style). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp, startAdminServer, type AdminApp, type AdminServer } from '../../src/admin/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { startAdminFixture, type AdminFixture } from '../support/admin-fixture.js';
import { ApiClient, capturingLogger, newToken } from '../support/admin-http.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock } from '../support/wait.js';

/** A console folder: an index page and one script. */
function consoleFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'surety-mount-console-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Surety</title><script src="app.js"></script>');
  writeFileSync(join(dir, 'app.js'), 'console.log("console");');
  return dir;
}

/** What express.use(prefix, handler) does before calling the handler: keeps the full path, strips the mount path. */
function stripLikeExpress(req: IncomingMessage, prefix: string): void {
  const url = req.url ?? '/';
  (req as IncomingMessage & { originalUrl: string }).originalUrl = url;
  req.url = url.slice(prefix.length) || '/';
  if (!req.url.startsWith('/')) req.url = `/${req.url}`;
}

describe('admin app mounted in a host server (SQLite)', () => {
  let f: StoreFixture;
  let admin: AdminApp;
  /** Mounted express-style at its basePath, with a console. */
  let express: AdminApp;
  /** Mounted express-style under a prefix it was not told about. */
  let misfit: AdminApp;
  const misfitLog = capturingLogger();
  let server: Server;
  let base: string;
  let consoleDir: string;
  const token = newToken('mount');

  beforeAll(async () => {
    f = await storeFixtures.sqlite('admin_mount');
    consoleDir = consoleFolder();
    const common = {
      store: f.store as AdminTestStore,
      tokens: [{ name: 'ops', role: 'operator' as const, token }],
      jobs: { enabled: false },
    };
    admin = createAdminApp({ ...common, basePath: '/ops/surety', consoleDir: false });
    express = createAdminApp({ ...common, basePath: '/app/surety', consoleDir });
    misfit = createAdminApp({ ...common, consoleDir, logger: misfitLog.logger });
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url.startsWith('/ops/surety')) return void admin.listener(req, res);
      if (url.startsWith('/stripped/')) {
        // A framework that strips the mount path and keeps nothing of it.
        req.url = url.slice('/stripped'.length);
        return void admin.listener(req, res);
      }
      if (url === '/app/surety' || url.startsWith('/app/surety/')) {
        stripLikeExpress(req, '/app/surety');
        return void express.listener(req, res);
      }
      if (url.startsWith('/misfit/')) {
        stripLikeExpress(req, '/misfit');
        return void misfit.listener(req, res);
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('host app');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const app of [admin, express, misfit]) await app?.close();
    await new Promise((resolve) => server?.close(resolve));
    await f?.teardown();
    rmSync(consoleDir, { recursive: true, force: true });
  });

  it('routes under the prefix, leaves the host app alone, and scopes the cookie to the prefix', async () => {
    const api = new ApiClient(`${base}/ops/surety`);
    expect((await api.call('GET', '/healthz')).status).toBe(200);
    expect((await api.call('GET', '/api/overview')).status).toBe(401);
    expect((await api.call('GET', '/api/overview', { token })).status).toBe(200);
    expect(await (await fetch(`${base}/elsewhere`)).text()).toBe('host app');
    const login = await api.call('POST', '/api/session', { body: { token } });
    expect(login.headers.get('set-cookie')).toMatch(/Path=\/ops\/surety;/);
    const bare = await fetch(`${base}/ops/surety`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/ops/surety/');
    const doc = (await api.call('GET', '/api/openapi.json', { token })).body;
    expect(doc.servers).toEqual([{ url: '/ops/surety' }]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['bearer', 'session']);
  });

  it('mounted like express.use(basePath, listener): serves the console and scopes the cookie to basePath', async () => {
    const api = new ApiClient(`${base}/app/surety`);
    const page = await api.call('GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Surety</title>');
    expect((await api.call('GET', '/app.js')).status).toBe(200);
    const bare = await fetch(`${base}/app/surety`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, '/app/surety/']);

    const origin = base;
    const login = await api.call('POST', '/api/session', { body: { token }, headers: { origin } });
    expect(login.status).toBe(200);
    expect(login.headers.get('set-cookie')).toMatch(/Path=\/app\/surety;/);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    // The cookie reaches the API under the prefix, where the console calls it (relative to the page).
    expect((await api.call('GET', '/api/session', { headers: { cookie } })).body).toMatchObject({ actor: 'ops' });
    const doc = (await api.call('GET', '/api/openapi.json', { token })).body;
    expect(doc.servers).toEqual([{ url: '/app/surety' }]);
  });

  it('warns once when mounted under a prefix that is not its basePath', async () => {
    const api = new ApiClient(`${base}/misfit`);
    expect((await api.call('GET', '/api/overview', { token })).status).toBe(200);
    expect((await api.call('GET', '/')).status).toBe(200);
    const warnings = misfitLog.lines.filter((l) => l.includes('other than basePath'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/set basePath to the mount path/);
  });

  it('answers with the prefix already stripped by a framework', async () => {
    const api = new ApiClient(`${base}/stripped`);
    expect((await api.call('GET', '/api/overview', { token })).status).toBe(200);
    expect((await api.call('GET', '/api/overview')).status).toBe(401);
  });

  it('serves the same app through fetch()', async () => {
    const res = await admin.fetch(
      new Request('http://x/ops/surety/api/dead-letters?limit=1', { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ items: [], nextBefore: null, store: 'default' });
  });
});

describe('admin app when the database is gone (SQLite)', () => {
  it('answers readiness 503 (once its 1 s answer is past) and API calls 503 with a generic message, and keeps serving health', async () => {
    const f = await storeFixtures.sqlite('admin_down');
    const token = newToken('down');
    const clock = new ManualClock(Date.now());
    const admin = createAdminApp({
      store: f.store as AdminTestStore,
      tokens: [{ name: 'ops', role: 'operator', token }],
      consoleDir: false,
      jobs: { enabled: false },
      clock,
    });
    const get = (path: string) =>
      admin.fetch(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${token}` } }));
    try {
      expect((await get('/readyz')).status).toBe(200);
      await f.store.close(); // the database connection is gone for real
      expect((await get('/readyz')).status).toBe(200); // the shared answer, under 1 s old
      clock.advance(1_000);
      const ready = await get('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable' });
      const overview = await get('/api/overview');
      expect(overview.status).toBeGreaterThanOrEqual(500);
      const body = (await overview.json()) as { error: { code: string; message: string } };
      expect(body.error.message).not.toMatch(/sqlite|database connection is not open|at .*\.ts/i);
      expect((await get('/healthz')).status).toBe(200);
    } finally {
      await admin.close();
      await f.teardown().catch(() => undefined);
    }
  });
});

describe('standalone server with a basePath (SQLite)', () => {
  let f: StoreFixture;
  let server: AdminServer;
  let origin: string;
  let consoleDir: string;
  const token = newToken('standalone');

  beforeAll(async () => {
    f = await storeFixtures.sqlite('admin_base');
    consoleDir = consoleFolder();
    server = await startAdminServer({
      store: f.store as AdminTestStore,
      tokens: [{ name: 'ops', role: 'operator', token }],
      basePath: '/surety',
      consoleDir,
      jobs: { enabled: false },
      port: 0,
    });
    origin = new URL(server.url).origin;
  });
  afterAll(async () => {
    await server?.close();
    await f?.teardown();
    rmSync(consoleDir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${origin}${path}`, { headers, redirect: 'manual' });

  it('redirects console pages asked for without the prefix under it, where the cookie reaches the API', async () => {
    for (const [path, location] of [
      ['/', '/surety/'],
      ['/index.html', '/surety/index.html'],
      ['/app.js?v=2', '/surety/app.js?v=2'],
      ['/surety', '/surety/'],
    ] as const) {
      const res = await get(path);
      expect([res.status, res.headers.get('location')], path).toEqual([308, location]);
    }
    expect((await get('/surety/')).status).toBe(200);
    const login = await fetch(`${origin}/surety/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ token }),
    });
    expect(login.headers.get('set-cookie')).toMatch(/Path=\/surety;/);
  });

  it('leaves API, probe and metrics paths alone, and a page a proxy stripped the prefix from', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
    expect((await get('/api/overview', { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await get('/metrics')).status).toBe(401);
    const stripped = await get('/', { 'x-forwarded-prefix': '/surety/' });
    expect(stripped.status).toBe(200);
    expect(await stripped.text()).toContain('<title>Surety</title>');
  });
});

describe('the edit route takes what the edit schema allows (SQLite)', () => {
  let fx: AdminFixture;
  beforeAll(async () => {
    fx = await startAdminFixture('sqlite', { allowEdit: true });
  });
  afterAll(async () => fx?.close());

  it('accepts a 100 KiB body on the edit route, while other routes keep the 64 KiB limit', async () => {
    const group = uniqueName('g');
    const [dead] = await seedDeadLetters(fx.store, 1, { group, status: 'dead' });
    const body = JSON.stringify({ note: 'x'.repeat(100 * 1024) });
    const edited = await fx.api.call('POST', `/api/dead-letters/${dead!.id}/edit`, {
      token: fx.tokens.operator,
      body: { body, reason: 'trim the note' },
    });
    expect(edited.status, edited.text.slice(0, 300)).toBe(200);
    expect((await fx.store.admin.getDeadLetterById(dead!.id))!.body).toBe(body);

    const ignore = await fx.api.call('POST', `/api/dead-letters/${dead!.id}/ignore`, {
      token: fx.tokens.operator,
      body: { reason: 'x'.repeat(100 * 1024) },
    });
    expect(ignore.status).toBe(413);
    // Past what the schema's 1 MiB body can take even escaped: refused before it is read.
    const huge = await fx.api.call('POST', `/api/dead-letters/${dead!.id}/edit`, {
      token: fx.tokens.operator,
      body: { body: 'x'.repeat(7 * 1_048_576), reason: 'too big' },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('SURETY_PAYLOAD_TOO_LARGE');
    // Within the transport limit but over the schema's: the schema names the field.
    const long = await fx.api.call('POST', `/api/dead-letters/${dead!.id}/edit`, {
      token: fx.tokens.operator,
      body: { body: 'x'.repeat(1_048_577), reason: 'one too many' },
    });
    expect(long.status).toBe(400);
    expect(long.body.error.issues[0].path).toBe('body.body');
  });
});
