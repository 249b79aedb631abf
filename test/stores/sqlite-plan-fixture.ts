import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import type { HotStatement, PlanLayout, PlanReport } from '../conformance/hot-path-plan-suite.js';
import { uniqueName } from '../support/env.js';

/** 1..n as column `i`. */
const numbers = (n: number) =>
  `WITH RECURSIVE nums(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM nums WHERE i < ${Math.trunc(n)})`;

/** Rows a young deployment had when ANALYZE ran: a few, all of them still to do. With ten, SQLite scans a table rather than look up five keys. */
const YOUNG = 10;

/**
 * A store in a file of its own whose tables hold `layout`'s rows under the sqlite_stat1 of young
 * tables: ANALYZE saw a few hundred pending rows (of an empty table it records nothing), which were
 * then deleted and the layout loaded.
 */
export async function seedSqlitePlanStore(
  layout: PlanLayout,
): Promise<{ store: SqliteStore; prefix: string; teardown(): Promise<void> }> {
  const prefix = 'surety_';
  const path = join(tmpdir(), `${uniqueName('sqlite_plans')}.sqlite`);
  const store = await createSqliteStore({ path, tablePrefix: prefix });
  await store.migrate();
  const t = store.tables;
  const db = store.db;
  const young = layout.sizes.outbox + 1_000_000; // ids of their own, deleted before the load
  db.exec(`${numbers(YOUNG)}
    INSERT INTO ${t.outbox} (seq, message_id, type, msg_key, topic, ordering_key, version, headers, payload, created_at,
      next_attempt_at)
    SELECT ${young} + i, 'young-' || i, 't', 'young-' || i, 'topic', 'young-' || i, 1, '{}', 'p', i, i FROM nums`);
  db.exec(`${numbers(YOUNG)}
    INSERT INTO ${t.inbox} (message_id, group_name, recorded_at) SELECT 'young-' || i, 'g', i FROM nums`);
  db.exec(`${numbers(YOUNG)}
    INSERT INTO ${t.deadLetters} (id, message_id, group_name, topic, type, msg_key, version, headers, body,
      body_encoding, status, attempts, next_retry_at, last_error, poison, created_at, updated_at)
    SELECT ${young} + i, 'young-' || i, 'g', 'topic', 't', i, 1, '{}', 'b', 'utf8', 'pending', 1, i, 'e', 0, i, i FROM nums`);
  db.exec(`${numbers(YOUNG)}
    INSERT INTO ${t.deadLetterEvents} (dead_letter_id, message_id, group_name, at, kind, attempt)
    SELECT ${young} + i, 'young-' || i, 'g', i, 'failed', 1 FROM nums`);
  db.exec(`${numbers(YOUNG)}
    INSERT INTO ${t.outboxAttempts} (message_id, attempt, at, outcome) SELECT 'young-' || i, 1, i, 'failed' FROM nums`);
  db.exec('ANALYZE');
  for (const table of [t.outbox, t.inbox, t.deadLetters, t.deadLetterEvents, t.outboxAttempts]) {
    db.exec(`DELETE FROM ${table}`);
  }
  const o = layout.outbox;
  db.prepare(
    `${numbers(layout.sizes.outbox)}
    INSERT INTO ${t.outbox} (seq, message_id, type, msg_key, topic, ordering_key, key_seq, version, headers, payload,
      created_at, status, attempts, next_attempt_at, claimed_by, last_error, sent_at)
    SELECT i, '00000000-0000-4000-8000-' || printf('%012d', i), 't', i, 'topic',
      CASE WHEN ordered THEN 'k' || (i % 1000) ELSE CAST(i AS TEXT) END, CASE WHEN ordered THEN i ELSE 0 END, 1, '{}',
      'payload', i, status, CASE WHEN status = 'dead' THEN 12 ELSE 0 END, CASE WHEN held THEN @leaseEnd ELSE i END,
      CASE WHEN held THEN @owner END, CASE WHEN status = 'dead' THEN 'boom' END, CASE WHEN status = 'sent' THEN i END
    FROM (SELECT i, CASE WHEN i <= @sentTo THEN 'sent' WHEN i <= @deadTo THEN 'dead' ELSE 'pending' END AS status,
      i > @heldFrom AS held, i > @deadTo AND i % 10 = 0 AS ordered FROM nums)`,
  ).run({ leaseEnd: layout.leaseEnd, owner: layout.owner, sentTo: o.sentTo, deadTo: o.deadTo, heldFrom: o.heldFrom });
  db.prepare(
    `${numbers(layout.sizes.inbox)}
    INSERT INTO ${t.inbox} (message_id, group_name, recorded_at) SELECT 'm-' || i, @group, i FROM nums`,
  ).run({ group: layout.group });
  const d = layout.deadLetters;
  db.prepare(
    `${numbers(layout.sizes.deadLetters)}
    INSERT INTO ${t.deadLetters} (id, message_id, group_name, topic, type, msg_key, version, headers, body,
      body_encoding, status, attempts, next_retry_at, last_error, poison, claimed_by, lease_until, created_at, updated_at)
    SELECT i, 'dl-' || i, @group, 'topic', 't', i, 1, '{}', 'body', 'utf8', status, 1,
      CASE WHEN status = 'pending' THEN i END, 'boom', 0,
      CASE WHEN status = 'replaying' THEN CASE WHEN i <= @expiredTo THEN 'other-owner' ELSE @owner END END,
      CASE WHEN status = 'replaying' THEN CASE WHEN i <= @expiredTo THEN i ELSE @leaseEnd END END, i, i
    FROM (SELECT i, CASE WHEN i <= @resolvedTo THEN 'resolved' WHEN i <= @ignoredTo THEN 'ignored'
      WHEN i <= @deadTo THEN 'dead' WHEN i <= @replayingTo THEN 'replaying' ELSE 'pending' END AS status FROM nums)`,
  ).run({ group: layout.group, owner: layout.owner, leaseEnd: layout.leaseEnd, ...d });
  db.prepare(
    `${numbers(layout.sizes.deadLetters)}
    INSERT INTO ${t.deadLetterEvents} (id, dead_letter_id, message_id, group_name, at, kind, attempt)
    SELECT i, i, 'dl-' || i, @group, i, 'failed', 1 FROM nums`,
  ).run({ group: layout.group });
  db.exec(`${numbers(layout.sizes.attempts)}
    INSERT INTO ${t.outboxAttempts} (id, message_id, attempt, at, outcome, error)
    SELECT i, '00000000-0000-4000-8000-' || printf('%012d', i), 1, i, 'failed', 'boom' FROM nums`);
  const stats = db.prepare(`SELECT stat FROM sqlite_stat1 WHERE tbl = ?`).all(`${prefix}outbox`) as { stat: string }[];
  const recorded = Math.max(0, ...stats.map((s) => Number(s.stat.split(' ')[0])));
  if (recorded === 0 || recorded >= layout.sizes.outbox) {
    throw new Error('the outbox statistics are fresh: the plan checks would prove nothing');
  }
  return {
    store,
    prefix,
    async teardown() {
      await store.close();
      await Promise.all(['', '-wal', '-shm'].map((suffix) => rm(`${path}${suffix}`, { force: true })));
    },
  };
}

/**
 * EXPLAIN QUERY PLAN of the statement. SQLite reports no row counts, so the bound is the plan's
 * shape: every table is searched through an index or the primary key with a key or range (SEARCH),
 * never scanned whole (SCAN, which also means a full index walk), and never sorted (a temporary
 * B-tree for ORDER BY means every match was read first). What it may scan is what it built itself:
 * a subquery's rows (each subquery's own access is checked on its line), a VALUES list, a
 * table-valued function.
 */
export function examineSqlite(store: SqliteStore, st: HotStatement): PlanReport {
  const rows = store.db.prepare(`EXPLAIN QUERY PLAN ${st.text}`).all(...st.values) as { detail: string }[];
  const lines = rows.map((r) => r.detail);
  const violations = lines.filter(
    (line) =>
      /^SCAN (?!\(subquery-\d+\)|\d+-ROW VALUES CLAUSE|CONSTANT ROW|\w+ VIRTUAL TABLE)/.test(line) ||
      /USE TEMP B-TREE FOR ORDER BY/.test(line),
  );
  return { violations, plan: lines.join('\n') };
}
