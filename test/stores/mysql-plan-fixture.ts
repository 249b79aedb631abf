import mysql from 'mysql2/promise';
import { createMysqlStore, type MysqlStore } from '../../src/stores/mysql/index.js';
import type { HotStatement, PlanLayout, PlanReport } from '../conformance/hot-path-plan-suite.js';
import { readBudget } from '../conformance/hot-path-plan-suite.js';
import { testEnv, uniqueName } from '../support/env.js';

/** 1..n as column `i`, from cross-joined digits: MySQL 8 and MariaDB alike, computed by the server. */
function numbers(n: number): string {
  const digits = `(SELECT 0 AS d UNION ALL ${[1, 2, 3, 4, 5, 6, 7, 8, 9].map((d) => `SELECT ${d}`).join(' UNION ALL ')})`;
  const places = Math.max(1, Math.ceil(Math.log10(n + 1)));
  const names = Array.from({ length: places }, (_, k) => `p${k}`);
  const value = names.map((p, k) => `${p}.d * ${10 ** k}`).join(' + ');
  return `(SELECT ${value} + 1 AS i FROM ${names.map((p) => `${digits} ${p}`).join(', ')}) nums WHERE i <= ${Math.trunc(n)}`;
}

/**
 * A store under its own prefix whose tables hold `layout`'s rows under the persistent statistics
 * of the empty tables (ANALYZE TABLE, then the load, with automatic recalculation off).
 */
export async function seedMysqlPlanStore(
  layout: PlanLayout,
): Promise<{ pool: mysql.Pool; store: MysqlStore; prefix: string; teardown(): Promise<void> }> {
  const prefix = `${uniqueName('my_plans')}_`;
  const pool = mysql.createPool({ uri: testEnv.mysqlUrl, connectionLimit: 4 });
  const store = await createMysqlStore({ pool, tablePrefix: prefix });
  await store.migrate();
  const t = store.tables;
  const tables = [t.outbox, t.inbox, t.deadLetters, t.deadLetterEvents, t.outboxAttempts];
  for (const table of tables) {
    // Without this InnoDB recalculates the statistics in the background once a tenth of the rows changed.
    await pool.query(`ALTER TABLE ${table} STATS_AUTO_RECALC = 0`);
    await pool.query(`ANALYZE TABLE ${table}`);
  }
  const o = layout.outbox;
  await pool.query(
    `INSERT INTO ${t.outbox} (seq, message_id, type, msg_key, topic, ordering_key, key_seq, version, headers, payload,
      created_at, status, attempts, next_attempt_at, claimed_by, last_error, sent_at)
    SELECT i, CONCAT('00000000-0000-4000-8000-', LPAD(i, 12, '0')), 't', i, 'topic',
      IF(ordered, CONCAT('k', i % 1000), i), IF(ordered, i, 0), 1, '{}', 'payload', i, status,
      IF(status = 'dead', 12, 0), IF(held, ?, i), IF(held, ?, NULL), IF(status = 'dead', 'boom', NULL),
      IF(status = 'sent', i, NULL)
    FROM (SELECT i, CASE WHEN i <= ? THEN 'sent' WHEN i <= ? THEN 'dead' ELSE 'pending' END AS status,
      i > ? AS held, i > ? AND i % 10 = 0 AS ordered FROM ${numbers(layout.sizes.outbox)}) r`,
    [layout.leaseEnd, layout.owner, o.sentTo, o.deadTo, o.heldFrom, o.deadTo],
  );
  await pool.query(
    `INSERT INTO ${t.inbox} (message_id, group_name, recorded_at)
    SELECT CONCAT('m-', i), ?, i FROM ${numbers(layout.sizes.inbox)}`,
    [layout.group],
  );
  const d = layout.deadLetters;
  await pool.query(
    `INSERT INTO ${t.deadLetters} (id, message_id, group_name, topic, type, msg_key, version, headers, body,
      body_encoding, status, attempts, next_retry_at, last_error, poison, claimed_by, lease_until, created_at, updated_at)
    SELECT i, CONCAT('dl-', i), ?, 'topic', 't', i, 1, '{}', 'body', 'utf8', status, 1,
      IF(status = 'pending', i, NULL), 'boom', FALSE,
      IF(status = 'replaying', IF(i <= ?, 'other-owner', ?), NULL), IF(status = 'replaying', IF(i <= ?, i, ?), NULL), i, i
    FROM (SELECT i, CASE WHEN i <= ? THEN 'resolved' WHEN i <= ? THEN 'ignored' WHEN i <= ? THEN 'dead'
      WHEN i <= ? THEN 'replaying' ELSE 'pending' END AS status FROM ${numbers(layout.sizes.deadLetters)}) r`,
    [
      layout.group,
      d.expiredTo,
      layout.owner,
      d.expiredTo,
      layout.leaseEnd,
      d.resolvedTo,
      d.ignoredTo,
      d.deadTo,
      d.replayingTo,
    ],
  );
  await pool.query(
    `INSERT INTO ${t.deadLetterEvents} (id, dead_letter_id, message_id, group_name, at, kind, attempt)
    SELECT i, i, CONCAT('dl-', i), ?, i, 'failed', 1 FROM ${numbers(layout.sizes.deadLetters)}`,
    [layout.group],
  );
  await pool.query(
    `INSERT INTO ${t.outboxAttempts} (id, message_id, attempt, at, outcome, error)
    SELECT i, CONCAT('00000000-0000-4000-8000-', LPAD(i, 12, '0')), 1, i, 'failed', 'boom'
    FROM ${numbers(layout.sizes.attempts)}`,
  );
  const [stats] = await pool.query(
    'SELECT n_rows FROM mysql.innodb_table_stats WHERE database_name = DATABASE() AND table_name = ?',
    [`${prefix}outbox`],
  );
  if (Number((stats as { n_rows: unknown }[])[0]?.n_rows) > 0) {
    throw new Error('the outbox statistics are fresh: the plan checks would prove nothing');
  }
  return {
    pool,
    store,
    prefix,
    async teardown() {
      await pool.query(`DROP TABLE IF EXISTS ${Object.values(t).join(', ')}`);
      await pool.end();
    },
  };
}

type Json = { [key: string]: unknown };

/** Every table access of MariaDB's ANALYZE FORMAT=JSON output, wherever it is nested. */
function tableAccesses(node: unknown, out: Json[] = []): Json[] {
  if (Array.isArray(node)) {
    for (const item of node) tableAccesses(item, out);
  } else if (node && typeof node === 'object') {
    const obj = node as Json;
    if (typeof obj.table_name === 'string' && obj.access_type !== undefined) out.push(obj);
    for (const value of Object.values(obj)) tableAccesses(value, out);
  }
  return out;
}

/**
 * Runs the statement with MariaDB's ANALYZE FORMAT=JSON in a transaction that is rolled back (READ
 * COMMITTED, as the store's own transactions), and counts the rows each table access read.
 */
export async function examineMysql(pool: mysql.Pool, st: HotStatement): Promise<PlanReport> {
  const conn = await pool.getConnection();
  try {
    await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await conn.beginTransaction();
    const [rows] = await conn.query(`ANALYZE FORMAT=JSON ${st.text}`, st.values as unknown[]);
    const analyzed = JSON.parse(String((rows as Record<string, unknown>[])[0]!.ANALYZE)) as unknown;
    const lines: string[] = [];
    let read = 0;
    for (const a of tableAccesses(analyzed)) {
      const n = Number(a.r_rows ?? 0) * Number(a.r_loops ?? 1);
      read += n;
      const key = a.key === undefined ? '' : ` key ${String(a.key)}`;
      lines.push(
        `${String(a.table_name)}: ${String(a.access_type)}${key}, read ${n} rows in ${String(a.r_loops)} loops`,
      );
    }
    const violations = read > readBudget(st.rows) ? [`read ${read} rows (budget ${readBudget(st.rows)})`] : [];
    return { violations, plan: lines.join('\n') };
  } finally {
    await conn.rollback().catch(() => undefined);
    conn.release();
  }
}
