import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAdminAuditConformance } from '../conformance/admin-audit-suite.js';
import { runAdminStoreConformance } from '../conformance/admin-store-suite.js';
import { makePostgresFixture } from './fixtures.js';

runAdminStoreConformance('postgres', () => makePostgresFixture('pg_admin'));
runAdminAuditConformance('postgres', () => makePostgresFixture('pg_audit'));

describe('postgres admin store specifics', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  beforeEach(async () => {
    f = await makePostgresFixture('pg_admin_specifics');
  });
  afterEach(async () => {
    await f.teardown();
  });

  it('indexes no outbox column the relay updates, so its updates stay HOT (the queue is a table of its own)', async () => {
    const { rows } = await f.pool.query<{ indexname: string; indexdef: string }>(
      'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
      [f.schema, 'surety_outbox'],
    );
    const relayColumns = /\b(status|attempts|next_attempt_at|claimed_by|locked_until|last_error|sent_at)\b/;
    const others = rows;
    expect(others.map((r) => r.indexname)).toEqual([
      'surety_outbox_created',
      'surety_outbox_message_id',
      'surety_outbox_pkey',
      'surety_outbox_type_key',
    ]);
    for (const r of others) expect(r.indexdef).not.toMatch(relayColumns);
  });

  it('answers, rather than fails, for an id that cannot be an outbox message id (UUID column)', async () => {
    expect(await f.store.admin.lineage("x' OR 1=1 --")).toBeUndefined();
    expect(await f.store.admin.resendOutbox('not-a-uuid', { actor: 'a', now: 1 })).toBe(false);
  });
});
