/**
 * What a scenario reports: tables of figures (a cell is a summary of the repetitions, or text) and
 * targets, checked on the median. The same shape goes to stdout and to bench/results/latest.json,
 * and report.ts renders it as the markdown the docs use.
 */
import { summarize, type Summary } from './stats.js';

export interface Figure extends Summary {
  /** Decimals to print. */
  readonly digits: number;
  /** Every repetition's value, in the order they ran. */
  readonly values: readonly number[];
}
export type Cell = Figure | string;

export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly { readonly label: string; readonly cells: readonly Cell[] }[];
}

export interface Target {
  readonly name: string;
  readonly value: Figure;
  /** For instance `>= 1.6`. */
  readonly goal: string;
  readonly met: boolean;
}

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  /** How it was run, one sentence. */
  readonly conditions: string;
  readonly tables: readonly Table[];
  readonly targets: readonly Target[];
  readonly notes: readonly string[];
}

export const figure = (values: readonly number[], digits = 0): Figure => ({
  ...summarize(values),
  digits,
  values: [...values],
});

export function target(name: string, values: readonly number[], op: '>=' | '<=', bound: number, digits = 2): Target {
  const value = figure(values, digits);
  const met = op === '>=' ? value.median >= bound : value.median <= bound;
  return { name, value, goal: `${op} ${bound}`, met };
}

const num = (v: number | null, digits: number) =>
  v === Infinity
    ? '∞'
    : v !== null && Number.isFinite(v)
      ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
      : 'n/a';

export function formatCell(c: Cell): string {
  if (typeof c === 'string') return c;
  if (c.n <= 1 || c.min === c.max) return num(c.median, c.digits);
  return `${num(c.median, c.digits)} (${num(c.min, c.digits)}–${num(c.max, c.digits)})`;
}

function markdownTable(columns: readonly string[], rows: readonly string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** One scenario as markdown: its tables, then its targets. Figures read "median (min–max)". */
export function renderScenario(s: ScenarioResult): string {
  const out = [`### ${s.title}`, '', s.conditions, ''];
  for (const t of s.tables) {
    out.push(
      `${t.title}:`,
      '',
      markdownTable(
        ['', ...t.columns],
        t.rows.map((r) => [r.label, ...r.cells.map(formatCell)]),
      ),
      '',
    );
  }
  if (s.targets.length > 0) {
    const rows = s.targets.map((t) => [t.name, formatCell(t.value), t.goal, t.met ? 'met' : '**not met**']);
    out.push(markdownTable(['target', 'median (range)', 'goal', ''], rows), '');
  }
  for (const n of s.notes) out.push(`- ${n}`);
  if (s.notes.length > 0) out.push('');
  return out.join('\n');
}
