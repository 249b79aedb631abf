import type { Command } from 'commander';
import type { z } from 'zod';
import { AdminError } from '../../admin/admin-errors.js';
import { messageIdSchema, outboxFilterSchema, pageSchema, parseInput } from '../../admin/admin-schemas.js';
import type { OutboxRow } from '../../ports/outbox-store.js';
import { runBulkJob } from '../bulk.js';
import { EXIT, UsageError } from '../cli-errors.js';
import { withAdmin, withCommonOptions, type AdminContext, type CommonOptions } from '../context.js';
import { asUsageError, defined, integerFlag, limitFlag, timeFlag } from '../flags.js';
import { writeJson, type CliIo } from '../io.js';
import { renderFields, renderTable, time, type Column } from '../output/table.js';
import type { CommandState } from './state.js';

interface FilterFlags extends CommonOptions {
  status?: string;
  type?: string;
  key?: string;
  topic?: string;
  error?: string;
  since?: string;
  until?: string;
}

function withFilters(cmd: Command): Command {
  return cmd
    .option('--status <list>', 'comma-separated: pending, sent, dead')
    .option('--type <type>', 'message type')
    .option('--key <key>', 'business key')
    .option('--topic <topic>', 'topic')
    .option('--error <text>', 'last error contains this text (case-insensitive)')
    .option('--since <time>', 'created at or after: ISO 8601, epoch ms, or a duration ago (15m, 2h, 7d)')
    .option('--until <time>', 'created before: same forms as --since');
}

function filterOf(o: FilterFlags, now: number): z.output<typeof outboxFilterSchema> {
  const input = defined({
    status: o.status,
    type: o.type,
    key: o.key,
    topic: o.topic,
    error: o.error,
    from: timeFlag('--since', o.since, now),
    to: timeFlag('--until', o.until, now),
  });
  try {
    return parseInput(outboxFilterSchema, input, 'filter');
  } catch (err) {
    throw asUsageError(err);
  }
}

const hasFilter = (o: FilterFlags) =>
  [o.status, o.type, o.key, o.topic, o.error, o.since, o.until].some((v) => v !== undefined);

function messageIds(texts: readonly string[]): string[] {
  return texts.map((t) => {
    if (!messageIdSchema.safeParse(t).success)
      throw new UsageError(`<messageId> must be a message id, a UUID (got "${t.slice(0, 60)}")`);
    return t;
  });
}

const LIST_COLUMNS: Column<OutboxRow>[] = [
  { header: 'SEQ', value: (r) => r.seq, align: 'right' },
  { header: 'MESSAGE ID', value: (r) => r.messageId, max: 36 },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'TYPE', value: (r) => r.type, max: 30 },
  { header: 'KEY', value: (r) => r.key, max: 24 },
  { header: 'ATTEMPTS', value: (r) => r.attempts, align: 'right' },
  { header: 'CREATED', value: (r) => time(r.createdAt) },
  { header: 'SENT', value: (r) => time(r.sentAt) },
  { header: 'ERROR', value: (r) => r.lastError, max: 50 },
];

/** `surety outbox list|show|resend`. */
export function registerOutbox(program: Command, io: CliIo, state: CommandState): void {
  const outbox = program.command('outbox').description('outbox messages: list, show, resend');

  withCommonOptions(withFilters(outbox.command('list').description('list outbox rows, newest first')))
    .option('--limit <n>', 'rows per page, 1-500 (default 50)')
    .option('--before <seq>', "next page: the previous page's last seq")
    .action(async (o: FilterFlags & { limit?: string; before?: string }) => {
      const filter = filterOf(o, Date.now());
      const before = integerFlag('--before', o.before, 1, Number.MAX_SAFE_INTEGER);
      const page = parseInput(pageSchema, defined({ limit: limitFlag(o.limit), before }), 'page');
      await withAdmin(o, io, async ({ admin }) => {
        const result = await admin.listOutbox(filter, page);
        if (o.json) return writeJson(io, result);
        if (result.items.length === 0) return void io.out.write('no outbox row matches\n');
        io.out.write(renderTable(LIST_COLUMNS, result.items));
        if (result.nextBefore !== null) io.out.write(`more: add --before ${result.nextBefore}\n`);
      });
    });

  withCommonOptions(
    outbox.command('show').description("one message's lineage: outbox row, attempts, inboxes, dead letters"),
  )
    .argument('<messageId>')
    .action(async (messageId: string, o: CommonOptions) => {
      const [id] = messageIds([messageId]);
      await withAdmin(o, io, async ({ admin }) => {
        const lineage = await admin.lineage(id!);
        if (o.json) return writeJson(io, lineage);
        const row = lineage.outbox;
        io.out.write(`message ${lineage.messageId}\n\noutbox:\n`);
        if (!row) io.out.write('  not in this outbox (another producer, or purged after sending)\n');
        else {
          io.out.write(
            renderFields([
              ['status', row.status],
              ['type', row.type],
              ['key', row.key],
              ['topic', row.topic],
              ['created', time(row.createdAt)],
              ['attempts', row.attempts],
              ['next attempt', row.status === 'pending' ? time(row.nextAttemptAt) : null],
              ['sent (confirmed)', time(row.sentAt)],
              ['last error', row.lastError],
            ]),
          );
          if (row.history.length) {
            io.out.write('\nattempts:\n');
            io.out.write(
              renderTable(
                [
                  { header: 'AT', value: (a) => time(a.at) },
                  { header: 'OUTCOME', value: (a) => a.outcome },
                  { header: 'ATTEMPT', value: (a) => a.attempt, align: 'right' },
                  { header: 'BY', value: (a) => a.actor, max: 40 },
                  { header: 'ERROR', value: (a) => a.error, max: 80 },
                ],
                row.history,
              ),
            );
          }
        }
        io.out.write('\nconsumed by:\n');
        io.out.write(
          lineage.inbox.length
            ? renderTable(
                [
                  { header: 'GROUP', value: (i) => i.group },
                  { header: 'RECORDED', value: (i) => time(i.recordedAt) },
                ],
                lineage.inbox,
              )
            : '  no inbox holds it\n',
        );
        io.out.write('\ndead letters:\n');
        io.out.write(
          lineage.deadLetters.length
            ? renderTable(
                [
                  { header: 'ID', value: (d) => d.id, align: 'right' },
                  { header: 'GROUP', value: (d) => d.group },
                  { header: 'STATUS', value: (d) => d.status },
                  { header: 'ATTEMPTS', value: (d) => d.attempts, align: 'right' },
                  { header: 'ERROR', value: (d) => d.lastError, max: 80 },
                ],
                lineage.deadLetters,
              )
            : '  none\n',
        );
      });
    });

  withCommonOptions(
    withFilters(
      outbox
        .command('resend')
        .description('publish messages again with the same message id (also ones already sent)')
        .argument('[messageIds...]'),
    ),
  )
    .option('--all-matching', 'resend every row the filter flags match, as a bulk job')
    .option('--rate <n>', 'bulk job: rows per second (default 50)')
    .option('--reason <text>', 'why (recorded in the audit log)')
    .action(async (ids: string[], o: FilterFlags & { allMatching?: boolean; rate?: string; reason?: string }) => {
      const reason = o.reason?.trim() || null;
      if (o.allMatching) {
        if (ids.length > 0)
          throw new UsageError('give either message ids or --all-matching with filter flags, not both');
        const filter = filterOf(o, Date.now());
        const rate = integerFlag('--rate', o.rate, 1, 10_000);
        state.exitCode = await withAdmin(o, io, (ctx) =>
          runBulkJob(
            ctx,
            io,
            { kind: 'outbox.resend', filter, reason, ...(rate ? { ratePerSecond: rate } : {}) },
            Boolean(o.json),
          ),
        );
        return;
      }
      if (hasFilter(o)) throw new UsageError('filter flags select rows only with --all-matching');
      if (o.rate !== undefined) throw new UsageError('--rate applies only with --all-matching');
      if (ids.length === 0) throw new UsageError('give the message ids to resend, or --all-matching');
      const valid = messageIds(ids);
      state.exitCode = await withAdmin(o, io, (ctx) => resendAll(ctx, io, valid, reason, Boolean(o.json)));
    });
}

async function resendAll(
  ctx: AdminContext,
  io: CliIo,
  ids: readonly string[],
  reason: string | null,
  json: boolean,
): Promise<number> {
  let code: number = EXIT.ok;
  const results: unknown[] = [];
  for (const id of ids) {
    try {
      const r = await ctx.admin.resend(id, ctx.actor, reason);
      results.push({ messageId: id, ...r });
      if (!json) {
        io.out.write(`outbox ${id}: pending again; the relay publishes it with the same message id\n`);
        for (const w of r.warnings) io.err.write(`warning: outbox ${id}: ${w}\n`);
      }
    } catch (err) {
      const e = asUsageError(err);
      if (!(e instanceof AdminError)) throw e;
      code = EXIT.failed;
      results.push({ messageId: id, changed: false, error: { code: e.code, message: e.message } });
      if (!json) io.err.write(`surety: outbox ${id}: ${e.message}\n`);
    }
  }
  if (json) writeJson(io, { action: 'outbox.resend', results });
  return code;
}
