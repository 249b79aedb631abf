import type { Command } from 'commander';
import { DEFAULT_PAGE, MAX_PAGE, pageSchema, parseInput } from '../admin/admin-schemas.js';
import type { Page, PageRequest } from '../ports/admin-store.js';
import { defined, integerFlag, limitFlag } from './flags.js';
import { writeJson, type CliIo } from './io.js';
import { renderTable, type Column } from './output/table.js';

export interface PageFlags {
  readonly limit?: string;
  readonly before?: string;
}

/** `--limit` and `--before` of a list command, newest first; `cursor` names what `--before` takes (id, seq). */
export function withPageOptions(cmd: Command, items: string, cursor: string): Command {
  return cmd
    .option('--limit <n>', `${items} per page, 1-${MAX_PAGE} (default ${DEFAULT_PAGE})`)
    .option(`--before <${cursor}>`, `next page: the previous page's last ${cursor}`);
}

/** The page flags as a page request; a bad one is a usage error naming the flag. */
export function pageOf(o: PageFlags): PageRequest {
  const before = integerFlag('--before', o.before, 1, Number.MAX_SAFE_INTEGER);
  return parseInput(pageSchema, defined({ limit: limitFlag(o.limit), before }), 'page');
}

/** One page: as JSON, or as a table with the flag that shows the next page; `none` when nothing matched. */
export function printPage<T>(
  io: CliIo,
  json: boolean | undefined,
  page: Page<T>,
  columns: readonly Column<T>[],
  none: string,
): void {
  if (json) return writeJson(io, page);
  if (page.items.length === 0) return void io.out.write(`${none}\n`);
  io.out.write(renderTable(columns, page.items));
  if (page.nextBefore !== null) io.out.write(`more: add --before ${page.nextBefore}\n`);
}
