import type { Command } from 'commander';
import type { z } from 'zod';
import { deadLetterFilterSchema } from '../../admin/admin-schemas.js';
import { escapeControlChars } from '../../core/control-chars.js';
import type { DeadLetterRow } from '../../ports/consumer-store.js';
import { UsageError } from '../cli-errors.js';
import { withAdmin, withCommonOptions, type CommonOptions } from '../context.js';
import { parseFilterFlags, rowIds, withTimeRangeOptions } from '../flags.js';
import { writeJson, type CliIo } from '../io.js';
import { pageOf, printPage, withPageOptions, type PageFlags } from '../list-page.js';
import { renderFields, renderTable, time, type Column } from '../output/table.js';
import { runRowAction, withRowActionOptions, type RowAction, type RowActionFlags } from '../row-action.js';
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
  return withTimeRangeOptions(
    cmd
      .option('--status <list>', 'comma-separated: pending, replaying, resolved, ignored, dead')
      .option('--type <type>', 'message type')
      .option('--key <key>', 'business key')
      .option('--group <group>', 'consumer group')
      .option('--error <text>', 'error contains this text (case-insensitive)')
      .option('--poison', 'only undecodable messages'),
    'created ',
  );
}

/** The filter flags as a validated filter; throws a usage error naming the flag. */
function filterOf(o: FilterFlags): z.output<typeof deadLetterFilterSchema> {
  const { status, type, key, group, error, poison, since, until } = o;
  return parseFilterFlags(
    deadLetterFilterSchema,
    { status, type, key, group, error, poison, since, until },
    Date.now(),
  );
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

/** The replayer holding the row; on a pending row, one whose lease ran out (it died), kept for the record. */
const claimOf = (r: DeadLetterRow) =>
  r.claimedBy === null
    ? null
    : `${r.claimedBy}, lease ${r.status === 'replaying' ? 'until' : 'ended'} ${time(r.leaseUntil)}`;

/** `surety dlq list|show|replay|ignore`. */
export function registerDlq(program: Command, io: CliIo, state: CommandState): void {
  const dlq = program.command('dlq').description('dead letters: list, show, replay, ignore');

  withPageOptions(
    withCommonOptions(withFilters(dlq.command('list').description('list dead letters, newest first'))),
    'rows',
    'id',
  ).action(async (o: FilterFlags & PageFlags) => {
    const filter = filterOf(o);
    const page = pageOf(o);
    await withAdmin(o, io, async ({ admin }) =>
      printPage(io, o.json, await admin.listDeadLetters(filter, page), LIST_COLUMNS, 'no dead letter matches'),
    );
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
            ['claim', claimOf(row)],
            ['created', time(row.createdAt)],
            ['updated', time(row.updatedAt)],
            ['ignored because', row.ignoredReason],
            ['last error', row.lastError],
          ]),
        );
        // The body may span lines; its other control characters are shown, never sent to the terminal.
        const body = escapeControlChars(row.body, { keepNewlines: true });
        io.out.write(`\nbody (${row.bodyEncoding}):\n${body}\n\nhistory:\n`);
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
    withRowActionOptions(
      withCommonOptions(
        withFilters(dlq.command(name).description(description).argument('[ids...]', 'dead-letter ids')),
      ),
      'act on',
      name === 'ignore' ? 'why (required)' : 'why (recorded in the audit log)',
    ).action(async (ids: string[], o: FilterFlags & RowActionFlags) => {
      if (name === 'ignore' && !o.reason?.trim())
        throw new UsageError('--reason is required: say why these are ignored');
      state.exitCode = await runRowAction(io, deadLetterAction(name), ids, o, {
        given: hasFilter(o),
        parse: () => filterOf(o),
      });
    });

  action('replay', 'make dead letters due now; the replayer runs them through the consumer');
  action('ignore', 'close dead letters without running them (needs --reason)');
}

function deadLetterAction(name: 'replay' | 'ignore'): RowAction<number> {
  return {
    kind: `dlq.${name}`,
    ids: 'ids',
    missing: `give the ids of the dead letters to ${name}, or --all-matching with a filter, or --all`,
    idKey: 'id',
    parseIds: rowIds,
    label: (id) => `dead letter ${id}`,
    done: name === 'replay' ? 'due for replay now' : 'ignored',
    // An ignore without a reason is refused before any row is touched.
    act: (ctx, id, reason) =>
      name === 'replay' ? ctx.admin.replay(id, ctx.actor, reason) : ctx.admin.ignore(id, ctx.actor, reason ?? ''),
  };
}
