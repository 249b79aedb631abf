import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from 'surety/postgres';
import { createTestHarness } from 'surety/testing';
import { testEnv, uniqueName } from '../support/env.js';

// The harness on the user's own store: PostgreSQL, in a schema of this test's own. The relay claims rows as row locks
// there, whose outcome is written when the locked batch settles: settled() must wait for that too.

const schema = uniqueName('harness_pg');
let pool: pg.Pool;
let store: PostgresStore;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 8 });
  store = await createPostgresStore({ pool, schema });
  await store.migrate();
  await pool.query(`CREATE TABLE ${schema}.invoices (order_id text PRIMARY KEY, total int NOT NULL)`);
});

afterAll(async () => {
  await store?.close();
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
});

it('runs the pipeline on your PostgreSQL store, and leaves it open', async () => {
  const harness = await createTestHarness({ store });
  let failures = 1;
  harness.consumer({ group: 'billing' }).on('order.created', async (order: { id: string; total: number }, { tx }) => {
    if (failures-- > 0) throw new Error('payment service down');
    await tx.query(`INSERT INTO ${schema}.invoices (order_id, total) VALUES ($1, $2)`, [order.id, order.total]);
  });
  try {
    await harness.start();
    expect(harness.relay.locked).toBe(true);
    harness.faults.deliverTwice();
    for (const id of ['o-1', 'o-2', 'o-3'])
      await harness.outbox.transaction((tx) =>
        harness.outbox.add(tx, { type: 'order.created', key: id, payload: { id, total: 7 } }),
      );
    await harness.settled();
    expect(harness.published()).toHaveLength(3);
    expect(await store.outbox.stats()).toMatchObject({ pending: 0, sent: 3 });
    expect(await harness.deadLettered('billing')).toMatchObject([{ status: 'pending', attempts: 1 }]);
    harness.clock.advance(60_000);
    await harness.settled();
    const { rows } = await pool.query(`SELECT order_id FROM ${schema}.invoices ORDER BY order_id`);
    expect(rows.map((r: { order_id: string }) => r.order_id)).toEqual(['o-1', 'o-2', 'o-3']);
    expect(await harness.handled('billing')).toHaveLength(3);
  } finally {
    await harness.close();
  }
  expect(await store.outbox.stats()).toMatchObject({ sent: 3 }); // still open
});
