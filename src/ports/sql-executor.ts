/** Result of one statement. `rowCount` is the number of rows changed (or returned, for SELECT). */
export interface SqlResult<R = Record<string, unknown>> {
  readonly rows: R[];
  readonly rowCount: number;
  /** The AUTO_INCREMENT value an INSERT generated, where the driver reports one (MySQL). */
  readonly insertId?: number;
}

/**
 * The one way Surety's SQL joins the caller's transaction: "execute this SQL with these values".
 * Placeholders are the dialect's own (`$1` for PostgreSQL, `?` for MySQL and SQLite).
 * Adapters for raw driver transaction objects live in each store folder. Calls may overlap (consumer
 * handlers running at once): an executor answers each in the order issued, pipelined or queued.
 */
export interface SqlExecutor {
  query<R = Record<string, unknown>>(
    sql: string,
    values?: readonly unknown[],
    hints?: QueryHints,
  ): Promise<SqlResult<R>>;
}

/** Optional hints an executor may use or ignore. */
export interface QueryHints {
  /** A stable name for this statement text: drivers that can prepare it once per connection do so. */
  readonly name?: string;
  /**
   * Only the count of rows this statement returns or changes is read, never its columns (which may
   * be of a type a driver cannot read, as a NOTIFY's void): an executor may run it for its count.
   */
  readonly countOnly?: boolean;
}
