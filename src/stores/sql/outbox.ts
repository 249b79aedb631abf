import { StoreError } from '../../core/errors.js';
import type { ClaimRequest, FailureUpdate, NewOutboxRow, OutboxStore } from '../../ports/outbox-store.js';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { AsyncMutex } from './async-mutex.js';
import { recordOutboxFailure, type OutboxFailureSql } from './outbox-failure.js';
import { toOutboxRow } from './outbox-row.js';
import { rangeRows, runIn, type HotStatement, type OneOrStepwise, type OwnConnection } from './own-connection.js';
import { purgeSentStepwise, type SentPurgeSql } from './sent-purge.js';
import type { Statement } from './sql-dialect.js';
import { statsFromRows } from './stats.js';

/** A statement that changes rows and says how many: by its row count, or (`counts: 'n'`) in column `n` of its one row. */
export interface CountedStatement extends Statement {
  readonly counts?: 'n';
}

/** A statement over a list of seqs. */
export interface SeqsStatement<A extends readonly unknown[]> {
  /** Run with `runRange` (PostgreSQL's forced plan); otherwise with `run`, in autocommit. */
  readonly range?: boolean;
  /** Seqs per statement, all in one transaction of the store's own; without it, one statement for the list. */
  readonly chunk?: number;
  statement(seqs: readonly number[], ...args: A): CountedStatement;
}

/**
 * A dialect's outbox statements, placeholders its own. Where a dialect cannot do an operation in one
 * statement (no RETURNING, no data-modifying CTE, a planner that scans for a list of keys), it says
 * so by giving the stepwise form, which the shared code runs in a transaction of the store's own.
 */
export interface OutboxStatements {
  /** The insert, in the caller's transaction; `rowCount` 1 when new. `notify`: it also signals relays at commit. */
  insert(row: NewOutboxRow, keySeq: number, notify: boolean): HotStatement;
  /** Where the insert fails on a duplicate (type, key) instead of inserting nothing (MySQL): the error that says so. */
  isDuplicate?(err: unknown): boolean;
  /** `message_id` of the row that holds (type, key), as the caller's transaction sees it after a duplicate. */
  selectMessageId(type: string, key: string): Statement;
  /**
   * The ordering key's next key_seq as `last_seq`; with `readBack` (no RETURNING), the bump returns
   * nothing and `readBack` reads it in the same transaction.
   */
  readonly nextKeySeq: { statement(orderingKey: string): Statement; readBack?(orderingKey: string): Statement };
  /**
   * Takes due rows for `owner` until the lease ends: one range statement returning them, or
   * `stepwise` in a transaction: `select` the due rows, locked; with `ordered`, drop the seqs
   * `heldBack` returns; then `take` them. The claimed rows are the ones `take` returns, or without
   * `returnsRows`, the selected ones with the lease written.
   */
  readonly claim: OneOrStepwise<
    ClaimRequest,
    {
      select(req: ClaimRequest): Statement;
      heldBack?(seqs: readonly number[]): Statement;
      readonly take: SeqsStatement<[ClaimRequest]> & { readonly returnsRows: boolean };
    }
  >;
  /** Marks pending rows sent at `now`. */
  readonly markSent: SeqsStatement<[now: number]>;
  /** Makes `owner`'s claimed rows due at `now`. */
  readonly release: SeqsStatement<[owner: string, now: number]>;
  /** One statement that records the failure with its history row (`rowCount` 1), or the two statements of it. */
  readonly recordFailure:
    | { readonly mode: 'one'; statement(u: FailureUpdate, now: number): Statement }
    | { readonly mode: 'stepwise'; readonly sql: OutboxFailureSql };
  /** Sent rows before `before` with their history: one range statement, or select-then-delete steps. */
  readonly purgeSent:
    | { readonly mode: 'one'; statement(before: number, limit: number): CountedStatement }
    | { readonly mode: 'stepwise'; readonly sql: SentPurgeSql };
  /** `status`, `n`, `oldest` per status. */
  stats(): Statement;
  selectByMessageId(messageId: string): Statement;
  /**
   * Takes or renews a named lease: an upsert returning a row only to its holder, or (`readBack`) an
   * upsert that cannot say, followed by a read of the holder in the same transaction.
   */
  readonly acquireLease:
    | { readonly mode: 'returning'; statement(name: string, owner: string, now: number, expiresAt: number): Statement }
    | {
        readonly mode: 'readBack';
        upsert(name: string, owner: string, now: number, expiresAt: number): Statement;
        selectOwner(name: string): Statement;
      };
}

/** What the outbox needs of its store besides statements. */
export interface OutboxEdge {
  readonly outboxTable: string;
  /** The store's `transaction`, the caller's own (driver errors as they are). */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** Per caller transaction: a key_seq bump and its read-back must not interleave with another add's. */
const keySeqLocks = new WeakMap<SqlExecutor, AsyncMutex>();

const changed = (s: CountedStatement, res: SqlResult) => (s.counts === 'n' ? Number(res.rows[0]!.n) : res.rowCount);

/** The outbox concern of every SQL store, given the dialect's statements and the store's connection. */
export function createOutboxStore(db: OwnConnection, sql: OutboxStatements, edge: OutboxEdge): OutboxStore {
  async function nextKeySeq(tx: SqlExecutor, orderingKey: string): Promise<number> {
    const { statement, readBack } = sql.nextKeySeq;
    const bump = statement(orderingKey);
    if (!readBack) return Number((await tx.query(bump.text, bump.values)).rows[0]!.last_seq);
    let lock = keySeqLocks.get(tx);
    if (!lock) keySeqLocks.set(tx, (lock = new AsyncMutex()));
    return lock.run(async () => {
      await tx.query(bump.text, bump.values);
      const read = readBack(orderingKey);
      return Number((await tx.query(read.text, read.values)).rows[0]!.last_seq);
    });
  }

  async function eachSeqs<A extends readonly unknown[]>(
    op: SeqsStatement<A>,
    seqs: readonly number[],
    ...args: A
  ): Promise<number> {
    if (seqs.length === 0) return 0;
    if (op.chunk === undefined) {
      const s = op.statement(seqs, ...args);
      return changed(s, await (op.range ? db.runRange(s.text, s.values) : db.run(s.text, s.values)));
    }
    const chunk = op.chunk;
    return db.transaction(async (tx) => {
      let n = 0;
      for (let i = 0; i < seqs.length; i += chunk) {
        const s = op.statement(seqs.slice(i, i + chunk), ...args);
        n += changed(s, await tx.query(s.text, s.values));
      }
      return n;
    });
  }

  async function claimStepwise(
    tx: SqlExecutor,
    claim: Extract<OutboxStatements['claim'], { mode: 'stepwise' }>,
    req: ClaimRequest,
  ): Promise<Record<string, unknown>[]> {
    const select = claim.select(req);
    let { rows } = await tx.query(select.text, select.values);
    if (req.ordered && claim.heldBack && rows.length > 0) {
      const held = claim.heldBack(rows.map((r) => Number(r.seq)));
      const skip = new Set((await tx.query(held.text, held.values)).rows.map((r) => Number(r.seq)));
      if (skip.size > 0) rows = rows.filter((r) => !skip.has(Number(r.seq)));
    }
    const { take } = claim;
    const taken: Record<string, unknown>[] = [];
    const step = take.chunk ?? Math.max(rows.length, 1);
    for (let i = 0; i < rows.length; i += step) {
      const s = take.statement(
        rows.slice(i, i + step).map((r) => Number(r.seq)),
        req,
      );
      taken.push(...(await tx.query(s.text, s.values)).rows);
    }
    if (take.returnsRows) return taken;
    return rows.map((r) => ({ ...r, next_attempt_at: req.now + req.leaseMs, claimed_by: req.owner }));
  }

  return {
    outboxTable: edge.outboxTable,
    transaction: (work) => edge.transaction(work),

    async insert(tx, row, options) {
      const keySeq = options.ordered ? await nextKeySeq(tx, row.orderingKey) : 0;
      let duplicate: unknown;
      try {
        const res = await runIn(tx, sql.insert(row, keySeq, options.notify ?? true));
        if (sql.isDuplicate || res.rowCount === 1) return { inserted: true, messageId: row.messageId };
      } catch (err) {
        // The failed statement alone is rolled back: the caller's transaction goes on.
        if (!sql.isDuplicate?.(err)) throw err;
        duplicate = err;
      }
      const s = sql.selectMessageId(row.type, row.key);
      const existing = await tx.query<{ message_id: string }>(s.text, s.values);
      if (existing.rows[0]) return { inserted: false, messageId: existing.rows[0].message_id };
      // No row with this (type, key): the duplicate was the message id itself, a caller bug worth surfacing.
      throw duplicate ?? new StoreError(`an outbox insert of ${row.messageId} inserted nothing and found no duplicate`);
    },

    async claim(req) {
      const rows = await rangeRows(db, sql.claim, req, claimStepwise);
      return rows.map(toOutboxRow).sort((a, b) => a.seq - b.seq);
    },

    markSent: (seqs, now) => eachSeqs(sql.markSent, seqs, now),

    async recordFailure(u) {
      const op = sql.recordFailure;
      if (op.mode === 'stepwise') return db.transaction((tx) => recordOutboxFailure(tx, op.sql, u));
      const s = op.statement(u, Date.now());
      return (await db.run(s.text, s.values)).rowCount === 1;
    },

    release: (owner, seqs, now) => eachSeqs(sql.release, seqs, owner, now),

    async purgeSent(before, limit) {
      const op = sql.purgeSent;
      if (op.mode === 'stepwise') return db.transaction((tx) => purgeSentStepwise(tx, op.sql, before, limit));
      const s = op.statement(before, limit);
      return changed(s, await db.runRange(s.text, s.values));
    },

    async stats() {
      const s = sql.stats();
      return statsFromRows((await db.run(s.text, s.values)).rows);
    },

    async acquireLease(name, owner, now, ttlMs) {
      const op = sql.acquireLease;
      if (op.mode === 'returning') {
        const s = op.statement(name, owner, now, now + ttlMs);
        return (await db.run(s.text, s.values)).rowCount === 1;
      }
      return db.transaction(async (tx) => {
        const upsert = op.upsert(name, owner, now, now + ttlMs);
        await tx.query(upsert.text, upsert.values);
        const read = op.selectOwner(name);
        return (await tx.query<{ owner: string }>(read.text, read.values)).rows[0]?.owner === owner;
      });
    },

    async get(messageId) {
      const s = sql.selectByMessageId(messageId);
      const { rows } = await db.run(s.text, s.values);
      return rows[0] ? toOutboxRow(rows[0]) : undefined;
    },
  };
}
