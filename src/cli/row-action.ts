import { escapeControlChars } from '../core/control-chars.js';
import type { Command } from 'commander';
import { AdminError } from '../admin/admin-errors.js';
import type { JobInput } from '../admin/admin-schemas.js';
import type { JobKind } from '../ports/admin-store.js';
import { runBulkJob } from './bulk.js';
import { EXIT, UsageError } from './cli-errors.js';
import { withAdmin, type AdminContext, type CommonOptions } from './context.js';
import { asUsageError, integerFlag } from './flags.js';
import { writeJson, type CliIo } from './io.js';

export interface RowActionFlags extends CommonOptions {
  readonly allMatching?: boolean;
  readonly all?: boolean;
  readonly rate?: string;
  readonly reason?: string;
}

/** An operator action on rows named by id, or on every row the filter flags match. */
export interface RowAction<Id> {
  /** The bulk job's kind, also the `action` of JSON output. */
  readonly kind: JobKind;
  /** What the id arguments are called in usage errors: `ids`, `message ids`. */
  readonly ids: string;
  /** The usage error when neither ids nor `--all-matching` are given. */
  readonly missing: string;
  /** The key of each result's id in JSON output. */
  readonly idKey: string;
  /** Parses the id arguments; a bad one is a usage error. */
  parseIds(texts: readonly string[]): Id[];
  /** One row in human output: `dead letter 7`. */
  label(id: Id): string;
  /** What human output says of a row once done. */
  readonly done: string;
  act(ctx: AdminContext, id: Id, reason: string | null): Promise<{ readonly warnings: readonly string[] }>;
}

/** `--all-matching`, `--all`, `--rate` and `--reason`; `verb` says what a bulk job does to each row. */
export function withRowActionOptions(cmd: Command, verb: string, reasonHelp: string): Command {
  return cmd
    .option('--all-matching', `${verb} every row the filter flags match, as a bulk job (needs a filter flag)`)
    .option('--all', `${verb} every row, with no filter flag, as a bulk job`)
    .option('--rate <n>', 'bulk job: rows per second (default 50)')
    .option('--reason <text>', reasonHelp);
}

/**
 * Runs `action` on the rows named by `ids`, one by one, or as a bulk job with a progress bar: with
 * `--all-matching` on every row the filter flags select (at least one is required), with `--all` on
 * every row. Ids and filter flags never mix. Returns the exit code: 1 when any row could not be done
 * (the others still are).
 */
export async function runRowAction<Id>(
  io: CliIo,
  action: RowAction<Id>,
  ids: readonly string[],
  o: RowActionFlags,
  filterFlags: { readonly given: boolean; parse(): unknown },
): Promise<number> {
  const reason = o.reason?.trim() || null;
  const json = Boolean(o.json);
  if (o.allMatching || o.all) {
    const how = o.all ? '--all' : '--all-matching';
    if (ids.length > 0) throw new UsageError(`give either ${action.ids} or ${how}, not both`);
    if (o.all && filterFlags.given)
      throw new UsageError('--all acts on every row: drop the filter flags, or use --all-matching with them');
    if (!o.all && !filterFlags.given)
      throw new UsageError('--all-matching needs at least one filter flag; to act on every row, use --all');
    const filter = o.all ? {} : filterFlags.parse();
    const rate = integerFlag('--rate', o.rate, 1, 10_000);
    const input = {
      kind: action.kind,
      filter,
      ...(o.all ? { all: true } : {}),
      reason,
      ...(rate ? { ratePerSecond: rate } : {}),
    } as JobInput;
    return withAdmin(o, io, (ctx) => runBulkJob(ctx, io, input, json));
  }
  if (filterFlags.given) throw new UsageError('filter flags select rows only with --all-matching');
  if (o.rate !== undefined) throw new UsageError('--rate applies only with --all-matching or --all');
  if (ids.length === 0) throw new UsageError(action.missing);
  const rows = action.parseIds(ids);
  return withAdmin(o, io, (ctx) => actOnRows(ctx, io, action, rows, reason, json));
}

async function actOnRows<Id>(
  ctx: AdminContext,
  io: CliIo,
  action: RowAction<Id>,
  ids: readonly Id[],
  reason: string | null,
  json: boolean,
): Promise<number> {
  let code: number = EXIT.ok;
  const results: unknown[] = [];
  for (const id of ids) {
    const label = action.label(id);
    try {
      const r = await action.act(ctx, id, reason);
      results.push({ [action.idKey]: id, ...r });
      if (!json) {
        io.out.write(`${label}: ${action.done}\n`);
        for (const w of r.warnings) io.err.write(`warning: ${label}: ${escapeControlChars(w)}\n`);
      }
    } catch (err) {
      const e = asUsageError(err);
      if (!(e instanceof AdminError)) throw e;
      code = EXIT.failed;
      results.push({ [action.idKey]: id, changed: false, error: { code: e.code, message: e.message } });
      if (!json) io.err.write(`surety: ${label}: ${escapeControlChars(e.message)}\n`);
    }
  }
  if (json) writeJson(io, { action: action.kind, results });
  return code;
}
