/**
 * Retained sent rows in bulk for the flat-cost scenario: one message goes through Surety as a user's
 * would (added, relayed, marked sent), then generate_series copies its row, with a fresh value in
 * every column a unique index covers. Read from the catalog, not written out, so it follows the
 * outbox table's columns; a schema that keeps the state in a second table needs it filled too, and
 * the caller's check of `stats().sent` says when that is so.
 */
import type pg from 'pg';

interface Column {
  readonly name: string;
  readonly type: string;
  readonly identity: boolean;
  readonly unique: boolean;
}

export async function copySentRow(pool: pg.Pool, table: string, copies: number): Promise<void> {
  const { rows } = await pool.query<Column>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
       (a.attidentity <> '' OR pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval%') AS identity,
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisunique
               AND a.attnum = ANY(i.indkey)) AS unique
     FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
    [table],
  );
  const copied = rows.filter((c) => !c.identity);
  const value = (c: Column) => {
    const col = `t."${c.name}"`;
    if (!c.unique) return col;
    if (c.type === 'uuid') return 'gen_random_uuid()';
    if (/int|numeric/.test(c.type)) return `${col} + g`;
    return `CASE WHEN ${col} IS NULL THEN NULL ELSE ${col} || '-' || g END`;
  };
  const names = copied.map((c) => `"${c.name}"`).join(', ');
  const values = copied.map(value).join(', ');
  await pool.query(
    `INSERT INTO ${table} (${names}) SELECT ${values} FROM (SELECT * FROM ${table} LIMIT 1) t, generate_series(1, $1) g`,
    [copies],
  );
}
