import type pg from 'pg';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';

/** What the handlers applied for one ordering key. */
export interface KeyHistory {
  readonly orderingKey: string;
  /** The sequence numbers applied, in the order they were recorded. */
  readonly seqs: readonly number[];
  /**
   * Applications that did not directly follow their predecessor: when `seq` was applied, the
   * highest sequence number applied before it (committed, or earlier in its own transaction) was not
   * `seq - 1`. An inversion, or two of the key's messages applied at once.
   */
  readonly outOfOrder: number;
  /** Of those, applications of a sequence number lower than one already applied. */
  readonly inversions: number;
}

/**
 * An effect log on PostgreSQL for order tests. Each application records, in the handler's
 * transaction, the highest sequence number of its key that this transaction can see: what was
 * committed before its statement, or applied earlier in the same transaction. That is the order in
 * which the database applied the effects, not the order a test process happened to observe. It takes
 * no locks, so handlers applying one key in two transactions at once are seen, never deadlocked.
 */
export class OrderLog {
  readonly table: string;

  constructor(schema: string) {
    this.table = `"${schema}".order_applied`;
  }

  async create(pool: pg.Pool): Promise<void> {
    await pool.query(`CREATE TABLE ${this.table} (n BIGSERIAL PRIMARY KEY, ordering_key TEXT NOT NULL,
      seq INT NOT NULL, before_seq INT, handled_by TEXT NOT NULL)`);
    await pool.query(`CREATE INDEX ON ${this.table} (ordering_key, seq)`);
  }

  /** Records one application; call it from the handler, with its transaction. */
  async record(tx: SqlExecutor, orderingKey: string, seq: number, handledBy: string): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.table} (ordering_key, seq, before_seq, handled_by)
       SELECT $1::text, $2::int, (SELECT max(seq) FROM ${this.table} WHERE ordering_key = $1::text), $3::text`,
      [orderingKey, seq, handledBy],
    );
  }

  async count(pool: pg.Pool): Promise<number> {
    return Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table}`)).rows[0]!.n);
  }

  /** Who applied each message, in the order they were recorded. */
  async handlers(pool: pg.Pool): Promise<string[]> {
    const { rows } = await pool.query<{ handled_by: string }>(`SELECT handled_by FROM ${this.table} ORDER BY n`);
    return rows.map((r) => r.handled_by);
  }

  async history(pool: pg.Pool): Promise<KeyHistory[]> {
    const { rows } = await pool.query<{ ordering_key: string; seq: number; before_seq: number | null }>(
      `SELECT ordering_key, seq, before_seq FROM ${this.table} ORDER BY ordering_key, n`,
    );
    const byKey = new Map<string, { seqs: number[]; outOfOrder: number; inversions: number }>();
    for (const r of rows) {
      const h = byKey.get(r.ordering_key) ?? { seqs: [], outOfOrder: 0, inversions: 0 };
      byKey.set(r.ordering_key, h);
      h.seqs.push(r.seq);
      const before = r.before_seq ?? -1;
      if (before !== r.seq - 1) h.outOfOrder++;
      if (before > r.seq) h.inversions++;
    }
    return [...byKey].map(([orderingKey, h]) => ({ orderingKey, ...h }));
  }
}

/** Out-of-order applications and inversions over all keys. */
export function disorder(history: readonly KeyHistory[]): { outOfOrder: number; inversions: number } {
  return {
    outOfOrder: history.reduce((sum, h) => sum + h.outOfOrder, 0),
    inversions: history.reduce((sum, h) => sum + h.inversions, 0),
  };
}

/** Work that takes a varying little while (whole milliseconds up to `maxMs`), as a handler calling out would. */
export const variableWork = (maxMs = 3): Promise<void> =>
  new Promise((r) => setTimeout(r, Math.floor(Math.random() * (maxMs + 1))));
