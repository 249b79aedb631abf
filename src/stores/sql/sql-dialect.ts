/**
 * The little that differs between the databases in the admin statements shared by all of them.
 * Each dialect's `admin-sql.ts` exports one.
 */
export interface SqlDialect {
  readonly name: 'postgres' | 'mysql' | 'sqlite';
  /** The placeholder of the n-th value (1-based). */
  placeholder(n: number): string;
  /**
   * SQL testing that `column` contains a pattern bound at `placeholder`, ignoring case. The bound
   * value comes from {@link containsPattern}.
   */
  containsIgnoreCase(column: string, placeholder: string): string;
  /** How a boolean is bound (SQLite has no booleans). */
  bool(value: boolean): unknown;
  /** Locks selected rows for the transaction ('' where the transaction itself is exclusive). */
  readonly forUpdate: string;
  /** The same, skipping rows another transaction holds. */
  readonly forUpdateSkipLocked: string;
  /** The id of the row the last INSERT on this connection created. */
  readonly lastInsertId: string;
  /** Whether `id` can be an outbox message id at all (PostgreSQL keeps them as UUID). */
  isOutboxMessageId(id: string): boolean;
}

/** One statement and its values, in the dialect's placeholder order. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * A LIKE pattern matching `text` anywhere, lower-cased (the dialects compare lower-cased columns or
 * use ILIKE), with `!` escaping the wildcards: a backslash means different things in MySQL strings.
 */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** Binds values in text order, so `$n` and `?` dialects get the same statement from one builder. */
export class Binder {
  readonly values: unknown[] = [];

  constructor(readonly d: SqlDialect) {}

  bind(value: unknown): string {
    this.values.push(value);
    return this.d.placeholder(this.values.length);
  }

  list(values: readonly unknown[]): string {
    return values.map((v) => this.bind(v)).join(', ');
  }

  statement(text: string): Statement {
    return { text, values: this.values };
  }
}

/** Collects AND-ed conditions; undefined filter values add nothing. */
export class Where {
  private readonly parts: string[] = [];

  constructor(private readonly b: Binder) {}

  eq(column: string, value: unknown): this {
    if (value !== undefined) this.parts.push(`${column} = ${this.b.bind(value)}`);
    return this;
  }

  in(column: string, values: readonly unknown[] | undefined): this {
    if (values === undefined) return this;
    // An empty list matches nothing, as the filter says.
    this.parts.push(values.length === 0 ? '1 = 0' : `${column} IN (${this.b.list(values)})`);
    return this;
  }

  gte(column: string, value: number | undefined): this {
    if (value !== undefined) this.parts.push(`${column} >= ${this.b.bind(value)}`);
    return this;
  }

  gt(column: string, value: number | undefined): this {
    if (value !== undefined) this.parts.push(`${column} > ${this.b.bind(value)}`);
    return this;
  }

  lt(column: string, value: number | undefined): this {
    if (value !== undefined) this.parts.push(`${column} < ${this.b.bind(value)}`);
    return this;
  }

  lte(column: string, value: number | undefined): this {
    if (value !== undefined) this.parts.push(`${column} <= ${this.b.bind(value)}`);
    return this;
  }

  /** A condition `build` writes with the binder (undefined adds nothing). */
  add(build: (b: Binder) => string | undefined): this {
    const condition = build(this.b);
    if (condition !== undefined) this.parts.push(condition);
    return this;
  }

  contains(column: string, text: string | undefined): this {
    if (text !== undefined && text !== '') {
      this.parts.push(this.b.d.containsIgnoreCase(column, this.b.bind(containsPattern(text))));
    }
    return this;
  }

  toString(): string {
    return this.parts.length === 0 ? '1 = 1' : this.parts.join(' AND ');
  }
}
