/** The admin app mounted in an existing node:http server under a prefix, as-is and prefix-stripped (express/connect style). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp, type AdminApp } from '../../src/admin/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { ApiClient, newToken } from '../support/admin-http.js';
import type { AdminTestStore } from '../support/admin-seed.js';
import { storeFixtures } from '../support/stores.js';

describe('admin app mounted in a host server (SQLite)', () => {
  let f: StoreFixture;
  let admin: AdminApp;
  let server: Server;
  let base: string;
  const token = newToken('mount');

  beforeAll(async () => {
    f = await storeFixtures.sqlite('admin_mount');
    admin = createAdminApp({
      store: f.store as AdminTestStore,
      tokens: [{ name: 'ops', role: 'operator', token }],
      basePath: '/ops/surety',
      consoleDir: false,
      jobs: { enabled: false },
    });
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url.startsWith('/ops/surety')) return void admin.listener(req, res);
      if (url.startsWith('/stripped/')) {
        // What express.use('/stripped', listener) does: the handler sees the path below the mount.
        req.url = url.slice('/stripped'.length);
        return void admin.listener(req, res);
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('host app');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await admin?.close();
    await new Promise((resolve) => server?.close(resolve));
    await f?.teardown();
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
  it('answers readiness 503 and API calls 503 with a generic message, and keeps serving health', async () => {
    const f = await storeFixtures.sqlite('admin_down');
    const token = newToken('down');
    const admin = createAdminApp({
      store: f.store as AdminTestStore,
      tokens: [{ name: 'ops', role: 'operator', token }],
      consoleDir: false,
      jobs: { enabled: false },
    });
    const get = (path: string) =>
      admin.fetch(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${token}` } }));
    try {
      expect((await get('/readyz')).status).toBe(200);
      await f.store.close(); // the database connection is gone for real
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
