import type { Command } from 'commander';
import type { z } from 'zod';
import { AdminError } from '../../admin/admin-errors.js';
import { deadLetterFilterSchema, parseInput, pageSchema, type JobInput } from '../../admin/admin-schemas.js';
import type { DeadLetterRow } from '../../ports/consumer-store.js';
import { runBulkJob } from '../bulk.js';
import { EXIT, UsageError } from '../cli-errors.js';
import { withAdmin, withCommonOptions, type AdminContext, type CommonOptions } from '../context.js';
import { asUsageError, defined, integerFlag, limitFlag, rowIds, timeFlag } from '../flags.js';
import { writeJson, type CliIo } from '../io.js';
import { renderFields, renderTable, time, type Column } from '../output/table.js';
import type { CommandState } from './state.js';

interface FilterFlags extends CommonOptions {
  status?: string;
  type?: string;
  key?: string;
  group?: string;
  error?: string;
  poison?: boolean;
  since?: string;
  until?: string;
}

function withFilters(cmd: Command): Command {
  return cmd
    .option('--status <list>', 'comma-separated: pending, replaying, resolved, ignored, dead')
    .option('--type <type>', 'message type')
    .option('--key <key>', 'business key')
    .option('--group <group>', 'consumer group')
    .option('--error <text>', 'error contains this text (case-insensitive)')
    .option('--poison', 'only undecodable messages')
    .option('--since <time>', 'created at or after: ISO 8601, epoch ms, or a duration ago (15m, 2h, 7d)')
    .option('--until <time>', 'created before: same forms as --since');
}

/** The filter flags as a validated filter; throws a usage error naming the flag. */
function filterOf(o: FilterFlags, now: number): z.output<typeof deadLetterFilterSchema> {
  const input = defined({
    status: o.status,
    type: o.type,
    key: o.key,
    group: o.group,
    error: o.error,
    poison: o.poison,
    from: timeFlag('--since', o.since, now),
    to: timeFlag('--until', o.until, now),
  });
  try {
    return parseInput(deadLetterFilterSchema, input, 'filter');
  } catch (err) {
    throw asUsageError(err);
  }
}

const hasFilter = (o: FilterFlags) =>
  [o.status, o.type, o.key, o.group, o.error, o.poison, o.since, o.until].some((v) => v !== undefined);

const LIST_COLUMNS: Column<DeadLetterRow>[] = [
  { header: 'ID', value: (r) => r.id, align: 'right' },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'GROUP', value: (r) => r.group, max: 30 },
  { header: 'TYPE', value: (r) => r.type || '(poison)', max: 30 },
  { header: 'KEY', value: (r) => r.key, max: 24 },
  { header: 'ATTEMPTS', value: (r) => r.attempts, align: 'right' },
  { header: 'NEXT RETRY', value: (r) => time(r.nextRetryAt) },
  { header: 'UPDATED', value: (r) => time(r.updatedAt) },
  { header: 'ERROR', value: (r) => r.lastError, max: 60 },
];

/** `surety dlq list|show|replay|ignore`. */
export function registerDlq(program: Command, io: CliIo, state: CommandState): void {
  const dlq = program.command('dlq').description('dead letters: list, show, replay, ignore');

  withCommonOptions(withFilters(dlq.command('list').description('list dead letters, newest first')))
    .option('--limit <n>', 'rows per page, 1-500 (default 50)')
    .option('--before <id>', "next page: the previous page's last id")
    .action(async (o: FilterFlags & { limit?: string; before?: string }) => {
      const filter = filterOf(o, Date.now());
      const page = parseInput(pageSchema, defined({ limit: limitFlag(o.limit), before: beforeFlag(o.before) }), 'page');
      await withAdmin(o, io, async ({ admin }) => {
        const result = await admin.listDeadLetters(filter, page);
        if (o.json) return writeJson(io, result);
        if (result.items.length === 0) return void io.out.write('no dead letter matches\n');
        io.out.write(renderTable(LIST_COLUMNS, result.items));
        if (result.nextBefore !== null) io.out.write(`more: add --before ${result.nextBefore}\n`);
      });
    });

  withCommonOptions(dlq.command('show').description('one dead letter with its history').argument('<id>')).action(
    async (id: string, o: CommonOptions) => {
      const [rowId] = rowIds([id]);
      await withAdmin(o, io, async ({ admin }) => {
        const row = await admin.getDeadLetter(rowId!);
        if (o.json) return writeJson(io, row);
        io.out.write(
          renderFields([
            ['id', row.id],
            ['message id', row.messageId],
            ['status', row.status],
            ['group', row.group],
            ['topic', row.topic],
            ['type', row.type || '(poison: undecodable)'],
            ['key', row.key],
            ['attempts', row.attempts],
            ['next retry', time(row.nextRetryAt)],
            ['created', time(row.createdAt)],
            ['updated', time(row.updatedAt)],
            ['ignored because', row.ignoredReason],
            ['last error', row.lastError],
          ]),
        );
        io.out.write(`\nbody (${row.bodyEncoding}):\n${row.body}\n\nhistory:\n`);
        io.out.write(
          renderTable(
            [
              { header: 'AT', value: (e) => time(e.at) },
              { header: 'EVENT', value: (e) => e.kind },
              { header: 'ATTEMPT', value: (e) => e.attempt, align: 'right' },
              { header: 'BY', value: (e) => e.actor, max: 40 },
              { header: 'DETAIL', value: (e) => e.detail, max: 80 },
            ],
            row.history,
          ),
        );
      });
    },
  );

  const action = (name: 'replay' | 'ignore', description: string) =>
    withCommonOptions(withFilters(dlq.command(name).description(description).argument('[ids...]', 'dead-letter ids')))
      .option('--all-matching', 'act on every row the filter flags match, as a bulk job')
      .option('--rate <n>', 'bulk job: rows per second (default 50)')
      .option('--reason <text>', name === 'ignore' ? 'why (required)' : 'why (recorded in the audit log)')
      .action(async (ids: string[], o: FilterFlags & { allMatching?: boolean; rate?: string; reason?: string }) => {
        const reason = o.reason?.trim();
        if (name === 'ignore' && !reason) throw new UsageError('--reason is required: say why these are ignored');
        if (o.allMatching) {
          if (ids.length > 0) throw new UsageError('give either ids or --all-matching with filter flags, not both');
          const filter = filterOf(o, Date.now());
          const rate = integerFlag('--rate', o.rate, 1, 10_000);
          state.exitCode = await withAdmin(o, io, (ctx) =>
            runBulkJob(
              ctx,
              io,
              {
                kind: `dlq.${name}`,
                filter,
                reason: reason ?? null,
                ...(rate ? { ratePerSecond: rate } : {}),
              } as JobInput,
              Boolean(o.json),
            ),
          );
          return;
        }
        if (hasFilter(o)) throw new UsageError('filter flags select rows only with --all-matching');
        if (o.rate !== undefined) throw new UsageError('--rate applies only with --all-matching');
        if (ids.length === 0) throw new UsageError(`give the ids of the dead letters to ${name}, or --all-matching`);
        const rows = rowIds(ids);
        state.exitCode = await withAdmin(o, io, (ctx) => actOnRows(ctx, io, name, rows, reason, Boolean(o.json)));
      });

  action('replay', 'make dead letters due now; the replayer runs them through the consumer');
  action('ignore', 'close dead letters without running them (needs --reason)');
}

async function actOnRows(
  ctx: AdminContext,
  io: CliIo,
  name: 'replay' | 'ignore',
  ids: readonly number[],
  reason: string | undefined,
  json: boolean,
): Promise<number> {
  let code: number = EXIT.ok;
  const results: unknown[] = [];
  for (const id of ids) {
    try {
      const r =
        name === 'replay'
          ? await ctx.admin.replay(id, ctx.actor, reason ?? null)
          : await ctx.admin.ignore(id, ctx.actor, reason!);
      results.push({ id, ...r });
      if (!json) {
        io.out.write(`dead letter ${id}: ${name === 'replay' ? 'due for replay now' : 'ignored'}\n`);
        for (const w of r.warnings) io.err.write(`warning: dead letter ${id}: ${w}\n`);
      }
    } catch (err) {
      const e = asUsageError(err);
      if (!(e instanceof AdminError)) throw e;
      code = EXIT.failed;
      results.push({ id, changed: false, error: { code: e.code, message: e.message } });
      if (!json) io.err.write(`surety: dead letter ${id}: ${e.message}\n`);
    }
  }
  if (json) writeJson(io, { action: `dlq.${name}`, results });
  return code;
}

function beforeFlag(text: string | undefined): number | undefined {
  return integerFlag('--before', text, 1, Number.MAX_SAFE_INTEGER);
}
