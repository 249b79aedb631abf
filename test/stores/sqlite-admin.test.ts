import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAdminAuditConformance } from '../conformance/admin-audit-suite.js';
import { runAdminStoreConformance } from '../conformance/admin-store-suite.js';
import { makeSqliteFixture } from './sqlite-fixture.js';

runAdminStoreConformance('sqlite', () => makeSqliteFixture('sqlite_admin'));
runAdminAuditConformance('sqlite', () => makeSqliteFixture('sqlite_audit'));

describe('sqlite admin store specifics', () => {
  let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
  beforeEach(async () => {
    f = await makeSqliteFixture('sqlite_admin_specifics');
  });
  afterEach(async () => {
    await f.teardown();
  });

  it('rejects, rather than deadlocks, an admin call made inside its own transaction', async () => {
    const ctx = { actor: 'a', now: 1 };
    await expect(f.store.transaction(() => f.store.admin.requestReplay(1, ctx))).rejects.toMatchObject({
      code: 'SURETY_STORE_FAILED',
    });
    await expect(f.store.transaction(() => f.store.admin.overview(1))).rejects.toMatchObject({
      code: 'SURETY_STORE_FAILED',
    });
  });
});
