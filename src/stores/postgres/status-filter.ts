/**
 * `status` is `value`, said so that PostgreSQL cannot prove a partial index's predicate from it.
 * The planner may walk a partial index (`WHERE status = 'pending'`) only when the query implies
 * its predicate; statements that find their rows by primary key use this test, so the key's index
 * is the only one they can use, however small stale statistics make the partial one look.
 * `IS NOT DISTINCT FROM` means `=` here: the column is NOT NULL.
 * @example `UPDATE ${t.outbox} SET ... WHERE seq = ANY($1::bigint[]) AND ${hasStatus('pending')}`
 */
export const hasStatus = (value: 'pending' | 'replaying', alias?: string) =>
  `${alias ? `${alias}.` : ''}status IS NOT DISTINCT FROM '${value}'`;
