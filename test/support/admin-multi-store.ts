import type { AdminAppOptions } from '../../src/admin/http/app-options.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { startTestAdminServer, type TestAdminServer } from './admin-fixture.js';
import type { AdminTestStore } from './admin-seed.js';
import { storeFixtures } from './stores.js';

export interface MultiStoreFixture extends TestAdminServer {
  /** The fixtures by store name, in display order. */
  readonly fixtures: Record<string, StoreFixture>;
  readonly stores: Record<string, AdminTestStore>;
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
  const served = await startTestAdminServer({ stores, consoleDir: false, ...options });
  return {
    ...served,
    fixtures,
    stores,
    async close() {
      await served.server.close();
      await Promise.all(Object.values(fixtures).map((f) => f.teardown().catch(() => undefined)));
    },
  };
}
