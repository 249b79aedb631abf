import { startAdminServer, type AdminServer } from '../../src/admin/index.js';
import type { AdminAppOptions } from '../../src/admin/http/app-options.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { ApiClient, capturingLogger, newToken } from './admin-http.js';
import type { AdminTestStore } from './admin-seed.js';
import { storeFixtures } from './stores.js';

export interface MultiStoreFixture {
  /** The fixtures by store name, in display order. */
  readonly fixtures: Record<string, StoreFixture>;
  readonly stores: Record<string, AdminTestStore>;
  readonly server: AdminServer;
  readonly api: ApiClient;
  readonly tokens: { readonly operator: string; readonly viewer: string };
  readonly logs: string[];
  close(): Promise<void>;
}

/**
 * One admin server over several migrated stores (each isolated: its own file, schema or prefix),
 * served as `stores: { [name]: store }` in the order given, with a viewer and an operator token.
 * @example
 * const fx = await startMultiStoreFixture({ orders: 'sqlite', billing: 'postgres' });
 */
export async function startMultiStoreFixture(
  dialects: Record<string, keyof typeof storeFixtures>,
  options: Partial<AdminAppOptions> = {},
): Promise<MultiStoreFixture> {
  const fixtures: Record<string, StoreFixture> = {};
  try {
    for (const [name, dialect] of Object.entries(dialects)) {
      fixtures[name] = await storeFixtures[dialect](`multi_${name}`);
    }
  } catch (err) {
    await Promise.all(Object.values(fixtures).map((f) => f.teardown()));
    throw err;
  }
  const stores = Object.fromEntries(Object.entries(fixtures).map(([n, f]) => [n, f.store as AdminTestStore]));
  const tokens = { operator: newToken('op'), viewer: newToken('view') };
  const { logger, lines } = capturingLogger();
  const server = await startAdminServer({
    stores,
    tokens: [
      { name: 'alice', role: 'operator', token: tokens.operator },
      { name: 'victor', role: 'viewer', token: tokens.viewer },
    ],
    logger,
    consoleDir: false,
    port: 0,
    jobs: { pollIntervalMs: 100 },
    ...options,
  });
  return {
    fixtures,
    stores,
    server,
    api: new ApiClient(server.url),
    tokens,
    logs: lines,
    async close() {
      await server.close();
      await Promise.all(Object.values(fixtures).map((f) => f.teardown().catch(() => undefined)));
    },
  };
}
