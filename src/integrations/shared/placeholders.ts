/**
 * Surety's statement text and values with `?` placeholders in the order the values are bound, for
 * ORMs that take only those (Knex's raw) or build statements from text and parameters (Drizzle's
 * `sql`). PostgreSQL's `$n` may repeat or come out of order; each occurrence becomes a binding of
 * its own. Quoted literals and identifiers are left alone. `parts` has one more element than `values`.
 */
export function splitPlaceholders(
  dialect: string,
  text: string,
  values: readonly unknown[],
): { parts: string[]; values: unknown[] } {
  const parts: string[] = [];
  const bound: unknown[] = [];
  const pattern =
    dialect === 'postgres'
      ? /'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g
      : /'(?:[^'\\]|\\.|'')*'|"(?:[^"]|"")*"|`[^`]*`|\?/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const token = match[0];
    if (token.startsWith("'") || token.startsWith('"') || token.startsWith('`')) continue;
    parts.push(text.slice(last, match.index));
    bound.push(dialect === 'postgres' ? values[Number(match[1]) - 1] : values[bound.length]);
    last = match.index + token.length;
  }
  parts.push(text.slice(last));
  return { parts, values: bound };
}
