import pg from 'pg';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import type { HotStatement, PlanLayout, PlanReport } from '../conformance/hot-path-plan-suite.js';
import { readBudget } from '../conformance/hot-path-plan-suite.js';
import { testEnv, uniqueName } from '../support/env.js';

/** A store in its own schema whose tables hold `layout`'s rows under statistics of the empty tables. */
export async function seedPostgresPlanStore(
  layout: PlanLayout,
): Promise<{ pool: pg.Pool; store: PostgresStore; teardown(): Promise<void> }> {
  const schema = uniqueName('pg_plans');
  const pool = new pg.Pool({ connectionString: testEnv.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const store = await createPostgresStore({ pool, schema });
  await store.migrate();
  const t = store.tables;
  const tables = [t.outbox, t.outboxPending, t.inbox, t.deadLetters, t.deadLetterEvents, t.outboxAttempts];
  for (const table of tables) {
    // No autovacuum: its ANALYZE after the load would make the statistics fresh again.
    await pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    await pool.query(`ANALYZE ${table}`);
  }
  const o = layout.outbox;
  await pool.query(
    `INSERT INTO ${t.outbox} (seq, message_id, type, msg_key, topic, ordering_key, key_seq, version, headers, payload,
      created_at, status, attempts, next_attempt_at, claimed_by, last_error, sent_at)
    SELECT i, ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, 't', i::text, 'topic',
      CASE WHEN ordered THEN 'k' || (i % 1000) ELSE i::text END, CASE WHEN ordered THEN i ELSE 0 END, 1, '{}', 'payload',
      i, status, CASE WHEN status = 'dead' THEN 12 ELSE 0 END, CASE WHEN held THEN $5 ELSE i END,
      CASE WHEN held THEN $6 END, CASE WHEN status = 'dead' THEN 'boom' END, CASE WHEN status = 'sent' THEN i END
    FROM (SELECT i, CASE WHEN i <= $2 THEN 'sent' WHEN i <= $3 THEN 'dead' ELSE 'pending' END AS status,
      i > $4 AS held, i > $3 AND i % 10 = 0 AS ordered FROM generate_series(1, $1::bigint) i) r`,
    [layout.sizes.outbox, o.sentTo, o.deadTo, o.heldFrom, layout.leaseEnd, layout.owner],
  );
  // The relay's queue: a row per unsent outbox row, as the store (and migration 8) keeps it.
  await pool.query(
    `INSERT INTO ${t.outboxPending} (seq, next_attempt_at, claimed_by, ordering_key, key_seq, dead)
    SELECT seq, next_attempt_at, claimed_by, CASE WHEN key_seq > 0 THEN ordering_key END, key_seq, status = 'dead'
    FROM ${t.outbox} WHERE status <> 'sent'`,
  );
  await pool.query(
    `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at)
    SELECT 'm-' || i, $2, i FROM generate_series(1, $1::bigint) i`,
    [layout.sizes.inbox, layout.group],
  );
  const d = layout.deadLetters;
  await pool.query(
    `INSERT INTO ${t.deadLetters} (id, message_id, group_name, topic, type, msg_key, version, headers, body,
      body_encoding, status, attempts, next_retry_at, last_error, poison, claimed_by, lease_until, created_at, updated_at)
    SELECT i, 'dl-' || i, $7, 'topic', 't', i::text, 1, '{}', 'body', 'utf8', status, 1,
      CASE WHEN status = 'pending' THEN i END, 'boom', false,
      CASE WHEN status = 'replaying' THEN CASE WHEN i <= $5 THEN 'other-owner' ELSE $8 END END,
      CASE WHEN status = 'replaying' THEN CASE WHEN i <= $5 THEN i ELSE $9 END END, i, i
    FROM (SELECT i, CASE WHEN i <= $2 THEN 'resolved' WHEN i <= $3 THEN 'ignored' WHEN i <= $4 THEN 'dead'
      WHEN i <= $6 THEN 'replaying' ELSE 'pending' END AS status FROM generate_series(1, $1::bigint) i) r`,
    [
      layout.sizes.deadLetters,
      d.resolvedTo,
      d.ignoredTo,
      d.deadTo,
      d.expiredTo,
      d.replayingTo,
      layout.group,
      layout.owner,
      layout.leaseEnd,
    ],
  );
  await pool.query(
    `INSERT INTO ${t.deadLetterEvents} (id, dead_letter_id, message_id, group_name, at, kind, attempt)
    SELECT i, i, 'dl-' || i, $2, i, 'failed', 1 FROM generate_series(1, $1::bigint) i`,
    [layout.sizes.deadLetters, layout.group],
  );
  await pool.query(
    `INSERT INTO ${t.outboxAttempts} (id, message_id, attempt, at, outcome, error)
    SELECT i, ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, 1, i, 'failed', 'boom'
    FROM generate_series(1, $1::bigint) i`,
    [layout.sizes.attempts],
  );
  // Explicit ids leave the identity sequences behind; a new row must not collide with a seeded one.
  for (const [table, column] of [
    [t.outbox, 'seq'],
    [t.deadLetters, 'id'],
    [t.deadLetterEvents, 'id'],
    [t.outboxAttempts, 'id'],
  ] as const) {
    await pool.query(`SELECT setval(pg_get_serial_sequence($1, $2), (SELECT max(${column}) FROM ${table}))`, [
      table,
      column,
    ]);
  }
  const { rows } = await pool.query(`SELECT reltuples FROM pg_class WHERE oid = $1::regclass`, [t.outbox]);
  if (Number(rows[0].reltuples) > 0)
    throw new Error('the outbox statistics are fresh: the plan checks would prove nothing');
  return {
    pool,
    store,
    async teardown() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

/**
 * Tuples the plan read: rows its table and index scans returned plus rows its filters threw away,
 * over all loops (EXPLAIN reports both per loop).
 */
function tuplesRead(node: PlanNode): number {
  const removed =
    (node['Rows Removed by Filter'] ?? 0) +
    (node['Rows Removed by Join Filter'] ?? 0) +
    (node['Rows Removed by Index Recheck'] ?? 0);
  const scan =
    node['Node Type'] !== 'ModifyTable' && (node['Relation Name'] !== undefined || node['Index Name'] !== undefined);
  const own = (removed + (scan ? node['Actual Rows'] : 0)) * node['Actual Loops'];
  return own + (node.Plans ?? []).reduce((sum, child) => sum + tuplesRead(child), 0);
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** `v` as a literal of EXECUTE's argument list; PostgreSQL casts it to the parameter's type. */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (Array.isArray(v)) {
    const items = v.map((e) => (typeof e === 'number' ? String(e) : `"${String(e).replace(/["\\]/g, '\\$&')}"`));
    return quote(`{${items.join(',')}}`);
  }
  return quote(String(v));
}

/** Blocks a statement may visit per row of its batch: its heap page and a few index pages per index. */
const bufferBudget = (rows: number) => 40 * rows + 500;

/**
 * Runs the statement with EXPLAIN ANALYZE in a transaction that is rolled back, once with the
 * custom plan (the values known to the planner, as an unnamed statement runs) and once with the
 * generic plan (what a prepared statement switches to after five runs), each under the settings
 * the store runs it with.
 */
export async function examinePostgres(pool: pg.Pool, st: HotStatement): Promise<PlanReport> {
  const violations: string[] = [];
  const plans: string[] = [];
  for (const mode of ['custom', 'generic'] as const) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      if (st.settings) await client.query(st.settings);
      await client.query(`SET LOCAL plan_cache_mode = force_${mode}_plan`);
      await client.query(`PREPARE surety_hot AS ${st.text}`);
      const args = st.values.map(literal).join(', ');
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE surety_hot(${args})`);
      const root = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
      const read = tuplesRead(root);
      const buffers = root['Shared Hit Blocks'] + root['Shared Read Blocks'];
      if (read > readBudget(st.rows))
        violations.push(`${mode} plan read ${read} tuples (budget ${readBudget(st.rows)})`);
      if (buffers > bufferBudget(st.rows)) {
        violations.push(`${mode} plan visited ${buffers} buffers (budget ${bufferBudget(st.rows)})`);
      }
      plans.push(`${mode} plan (${read} tuples, ${buffers} buffers):`);
      const text = await client.query(`EXPLAIN EXECUTE surety_hot(${args})`);
      // Lines cut short: a custom plan spells out all 500 values of an array.
      plans.push(...text.rows.map((r: Record<string, string>) => r['QUERY PLAN']!.slice(0, 200)));
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.query('DEALLOCATE ALL').catch(() => undefined);
      client.release();
    }
  }
  return { violations, plan: plans.join('\n') };
}
