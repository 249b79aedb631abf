import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/stores/sql/apply-migrations.js';
import { postgresMigrations } from '../../src/stores/postgres/migrations.js';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { testEnv, uniqueName } from '../support/env.js';

// Migration 8 moves the relay's queue out of the outbox table: a populated table of the schema
// before it must come out with every row in the state it had, each unsent one queued once.
describe('PostgreSQL migration 8 (pending queue) on a populated outbox', () => {
  const schema = uniqueName('pg_mig8');
  const pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 4 });
  let store: PostgresStore;
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  // 1-40 sent (sent_at 60_000 + i), 41-50 dead, 51-70 pending (61-70 under a lease), 71-80 pending and ordered.
  const statusOf = (i: number) => (i <= 40 ? 'sent' : i <= 50 ? 'dead' : 'pending');

  beforeAll(async () => {
    pool.on('error', () => undefined);
    store = await createPostgresStore({ pool, schema });
    const t = store.tables;
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"`);
      const before = postgresMigrations(t, 'surety_').filter((m) => m.id < 8);
      await applyMigrations(client, t.migrations, before, (n) => `$${n}`, Date.now());
      await client.query(
        `INSERT INTO ${t.outbox} (seq, message_id, type, msg_key, topic, ordering_key, key_seq, version, headers, payload,
          created_at, status, attempts, next_attempt_at, claimed_by, last_error, sent_at)
        SELECT i, ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, 't', i::text, 'topic',
          CASE WHEN i > 70 THEN 'k' ELSE i::text END, CASE WHEN i > 70 THEN i - 70 ELSE 0 END, 1, '{}', 'payload', i,
          CASE WHEN i <= 40 THEN 'sent' WHEN i <= 50 THEN 'dead' ELSE 'pending' END,
          CASE WHEN i BETWEEN 41 AND 50 THEN 12 ELSE 0 END,
          CASE WHEN i BETWEEN 61 AND 70 THEN 90000 ELSE i END,
          CASE WHEN i BETWEEN 61 AND 70 THEN 'relay-old' END,
          CASE WHEN i BETWEEN 41 AND 50 THEN 'boom' END,
          CASE WHEN i <= 40 THEN 60000 + i END
        FROM generate_series(1, 80) i`,
      );
      await client.query(`SELECT setval(pg_get_serial_sequence($1, 'seq'), 80)`, [t.outbox]);
    } finally {
      client.release();
    }
    await store.migrate();
  });

  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('keeps every row, its status, attempts, error and sent time', async () => {
    for (let i = 1; i <= 80; i++) {
      const row = (await store.outbox.get(id(i)))!;
      expect(row).toMatchObject({ seq: i, status: statusOf(i) });
      if (i <= 40) expect(row.sentAt).toBe(60_000 + i);
      if (i > 40 && i <= 50) expect(row).toMatchObject({ attempts: 12, lastError: 'boom' });
      if (i > 60 && i <= 70) expect(row).toMatchObject({ claimedBy: 'relay-old', nextAttemptAt: 90_000 });
    }
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${store.tables.outbox}`);
    expect(rows[0]!.n).toBe(80);
  });

  it('queues each unsent row once: the pending ones due as they were, the dead ones flagged', async () => {
    const { rows } = await pool.query<{ seq: string; dead: boolean }>(
      `SELECT seq, dead FROM ${store.tables.outboxPending} ORDER BY seq`,
    );
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 40 }, (_, k) => 41 + k));
    expect(rows.filter((r) => r.dead).map((r) => Number(r.seq))).toEqual(Array.from({ length: 10 }, (_, k) => 41 + k));
  });

  it('drops the state indexes of the outbox table and counts the sends already made', async () => {
    const { rows } = await pool.query<{ indexname: string }>(
      'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
      [schema, 'surety_outbox'],
    );
    expect(rows.map((r) => r.indexname)).toEqual([
      'surety_outbox_created',
      'surety_outbox_message_id',
      'surety_outbox_pkey',
      'surety_outbox_type_key',
    ]);
    const sent = await pool.query<{ n: string }>(`SELECT sum(n) AS n FROM ${store.tables.outboxSentMinutes}`);
    expect(Number(sent.rows[0]!.n)).toBe(40);
  });

  it('lets a relay claim the pending rows (ordered ones in key order), each once, and mark them sent', async () => {
    const now = 100_000;
    const claimed: number[] = [];
    for (;;) {
      const rows = await store.outbox.claim({ now, limit: 7, leaseMs: 30_000, owner: 'relay-new', ordered: true });
      if (rows.length === 0) break;
      claimed.push(...rows.map((r) => r.seq));
      // Ordered: a key's next row is claimable once the one before it is sent.
      expect(
        await store.outbox.markSent(
          rows.map((r) => r.seq),
          now,
        ),
      ).toBe(rows.length);
    }
    expect([...claimed].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, k) => 51 + k));
    const keyed = claimed.filter((s) => s > 70);
    expect(keyed).toEqual([...keyed].sort((a, b) => a - b));
    for (let i = 41; i <= 50; i++) expect((await store.outbox.get(id(i)))!.status).toBe('dead');
  });
});
