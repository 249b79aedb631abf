import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdminServer, type AdminServer } from '../../src/admin/index.js';
import type { AdminAppOptions } from '../../src/admin/http/app-options.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { ApiClient, capturingLogger, newToken } from './admin-http.js';
import type { AdminTestStore } from './admin-seed.js';
import { storeFixtures } from './stores.js';

/** An admin server the tests call, with an operator token (alice) and a viewer token (victor). */
export interface TestAdminServer {
  readonly server: AdminServer;
  readonly api: ApiClient;
  readonly tokens: { readonly operator: string; readonly viewer: string };
  /** Log lines the server wrote (pino JSON). */
  readonly logs: string[];
}

/**
 * An admin server on a free loopback port, serving what `options` names (`store` or `stores`), logging into memory,
 * with jobs polled every 100 ms.
 */
export async function startTestAdminServer(options: Partial<AdminAppOptions>): Promise<TestAdminServer> {
  const tokens = { operator: newToken('op'), viewer: newToken('view') };
  const { logger, lines } = capturingLogger();
  const server = await startAdminServer({
    tokens: [
      { name: 'alice', role: 'operator', token: tokens.operator },
      { name: 'victor', role: 'viewer', token: tokens.viewer },
    ],
    logger,
    port: 0,
    jobs: { pollIntervalMs: 100 },
    ...options,
  });
  return { server, api: new ApiClient(server.url), tokens, logs: lines };
}

export interface AdminFixture extends TestAdminServer {
  readonly f: StoreFixture;
  readonly store: AdminTestStore;
  readonly consoleDir: string;
  close(): Promise<void>;
}

/** A migrated store and an admin server on a free loopback port, with a viewer and an operator token. */
export async function startAdminFixture(
  dialect: keyof typeof storeFixtures,
  options: Partial<AdminAppOptions> = {},
): Promise<AdminFixture> {
  const f = await storeFixtures[dialect](`admin_${dialect}`);
  const store = f.store as AdminTestStore;
  const consoleDir = mkdtempSync(join(tmpdir(), 'surety-console-'));
  writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>Surety</title><script src="app.js"></script>');
  writeFileSync(join(consoleDir, 'app.js'), 'console.log("console");');
  const served = await startTestAdminServer({ store, consoleDir, ...options });
  return {
    ...served,
    f,
    store,
    consoleDir,
    async close() {
      await served.server.close();
      await f.teardown();
      rmSync(consoleDir, { recursive: true, force: true });
    },
  };
}
