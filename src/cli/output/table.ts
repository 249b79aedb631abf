import { escapeControlChars } from '../../core/control-chars.js';

export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => string | number | null | undefined;
  /** Longer cells are cut with an ellipsis. */
  readonly max?: number;
  readonly align?: 'left' | 'right';
}

/**
 * A plain-text table: a header, then one line per row; columns padded to their widest cell. Cells
 * hold one line each, with control characters shown as escapes (keys, errors and bodies come from
 * messages, and a terminal would act on their escape sequences).
 */
export function renderTable<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (columns[i]!.align === 'right' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

function cell(value: string | number | null | undefined, max = 60): string {
  if (value === null || value === undefined || value === '') return '-';
  const text = escapeControlChars(String(value).replace(/\s+/g, ' '));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `2025-01-31T12:00:05Z`: UTC, to the second. */
export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `key: value` lines, keys aligned; a value stays on its line, control characters shown as escapes. */
export function renderFields(fields: readonly (readonly [string, unknown])[]): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  const shown = (v: unknown) => (v === null || v === undefined || v === '' ? '-' : escapeControlChars(String(v)));
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${shown(v)}`).join('\n') + '\n';
}
