import type { Command } from 'commander';
import type { z } from 'zod';
import { messageIdSchema, outboxFilterSchema } from '../../admin/admin-schemas.js';
import { escapeControlChars } from '../../core/control-chars.js';
import type { OutboxRow } from '../../ports/outbox-store.js';
import { UsageError } from '../cli-errors.js';
import { withAdmin, withCommonOptions, type CommonOptions } from '../context.js';
import { searchLineage } from '../lineage-search.js';
import { renderLineage } from '../output/lineage.js';
import { parseFilterFlags, withTimeRangeOptions } from '../flags.js';
import { writeJson, type CliIo } from '../io.js';
import { pageOf, printPage, withPageOptions, type PageFlags } from '../list-page.js';
import { time, type Column } from '../output/table.js';
import { runRowAction, withRowActionOptions, type RowAction, type RowActionFlags } from '../row-action.js';
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
  return withTimeRangeOptions(
    cmd
      .option('--status <list>', 'comma-separated: pending, sent, dead')
      .option('--type <type>', 'message type')
      .option('--key <key>', 'business key')
      .option('--topic <topic>', 'topic')
      .option('--error <text>', 'last error contains this text (case-insensitive)'),
    'created ',
  );
}

/** The filter flags as a validated filter; throws a usage error naming the flag. */
function filterOf(o: FilterFlags): z.output<typeof outboxFilterSchema> {
  const { status, type, key, topic, error, since, until } = o;
  return parseFilterFlags(outboxFilterSchema, { status, type, key, topic, error, since, until }, Date.now());
}

const hasFilter = (o: FilterFlags) =>
  [o.status, o.type, o.key, o.topic, o.error, o.since, o.until].some((v) => v !== undefined);

function messageIds(texts: readonly string[]): string[] {
  return texts.map((t) => {
    if (!messageIdSchema.safeParse(t).success)
      throw new UsageError(`<messageId> must be a message id, a UUID (got "${escapeControlChars(t.slice(0, 60))}")`);
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

  withPageOptions(
    withCommonOptions(withFilters(outbox.command('list').description('list outbox rows, newest first'))),
    'rows',
    'seq',
  ).action(async (o: FilterFlags & PageFlags) => {
    const filter = filterOf(o);
    const page = pageOf(o);
    await withAdmin(o, io, async ({ admin }) =>
      printPage(io, o.json, await admin.listOutbox(filter, page), LIST_COLUMNS, 'no outbox row matches'),
    );
  });

  withCommonOptions(
    outbox
      .command('show')
      .description("one message's lineage: outbox row, attempts, inboxes, dead letters, in every database"),
    'all',
  )
    .argument('<messageId>')
    .action(async (messageId: string, o: CommonOptions) => {
      const [id] = messageIds([messageId]);
      const found = await searchLineage(o, io, id!);
      if (o.json) return writeJson(io, found.lineage);
      io.out.write(escapeControlChars(renderLineage(found), { keepNewlines: true }));
    });

  withRowActionOptions(
    withCommonOptions(
      withFilters(
        outbox
          .command('resend')
          .description('publish messages again with the same message id (also ones already sent)')
          .argument('[messageIds...]'),
      ),
    ),
    'resend',
    'why (recorded in the audit log)',
  ).action(async (ids: string[], o: FilterFlags & RowActionFlags) => {
    state.exitCode = await runRowAction(io, RESEND, ids, o, { given: hasFilter(o), parse: () => filterOf(o) });
  });
}

const RESEND: RowAction<string> = {
  kind: 'outbox.resend',
  ids: 'message ids',
  missing: 'give the message ids to resend, or --all-matching with a filter, or --all',
  idKey: 'messageId',
  parseIds: messageIds,
  label: (id) => `outbox ${id}`,
  done: 'pending again; the relay publishes it with the same message id',
  act: (ctx, id, reason) => ctx.admin.resend(id, ctx.actor, reason),
};
