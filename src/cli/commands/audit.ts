import type { Command } from 'commander';
import { auditFilterSchema, pageSchema, parseInput } from '../../admin/admin-schemas.js';
import type { AuditEntry } from '../../ports/admin-store.js';
import { withAdmin, withCommonOptions, type CommonOptions } from '../context.js';
import { asUsageError, defined, integerFlag, limitFlag, timeFlag } from '../flags.js';
import { writeJson, type CliIo } from '../io.js';
import { renderTable, time, type Column } from '../output/table.js';

interface AuditFlags extends CommonOptions {
  actor?: string;
  action?: string;
  target?: string;
  since?: string;
  until?: string;
  limit?: string;
  before?: string;
}

const COLUMNS: Column<AuditEntry>[] = [
  { header: 'ID', value: (e) => e.id, align: 'right' },
  { header: 'AT', value: (e) => time(e.at) },
  { header: 'ACTOR', value: (e) => `${e.actor} (${e.role})`, max: 40 },
  { header: 'ACTION', value: (e) => e.action },
  { header: 'TARGET', value: (e) => e.target, max: 48 },
  { header: 'OUTCOME', value: (e) => e.outcome },
  { header: 'REASON', value: (e) => e.reason, max: 60 },
];

/** `surety audit`: who did what, when, why, and how it ended. */
export function registerAudit(program: Command, io: CliIo): void {
  withCommonOptions(program.command('audit').description('the audit log of operator actions, newest first'))
    .option('--actor <name>', 'e.g. cli:alice or a token name')
    .option('--action <action>', 'dlq.replay, dlq.ignore, dlq.edit, outbox.resend, job.create, job.cancel')
    .option('--target <target>', 'dlq:<id>, outbox:<messageId> or job:<id>')
    .option('--since <time>', 'at or after: ISO 8601, epoch ms, or a duration ago (15m, 2h, 7d)')
    .option('--until <time>', 'before: same forms as --since')
    .option('--limit <n>', 'entries per page, 1-500 (default 50)')
    .option('--before <id>', "next page: the previous page's last id")
    .action(async (o: AuditFlags) => {
      const now = Date.now();
      const input = defined({
        actor: o.actor,
        action: o.action,
        target: o.target,
        from: timeFlag('--since', o.since, now),
        to: timeFlag('--until', o.until, now),
      });
      let filter;
      try {
        filter = parseInput(auditFilterSchema, input, 'filter');
      } catch (err) {
        throw asUsageError(err);
      }
      const before = integerFlag('--before', o.before, 1, Number.MAX_SAFE_INTEGER);
      const page = parseInput(pageSchema, defined({ limit: limitFlag(o.limit), before }), 'page');
      await withAdmin(o, io, async ({ admin }) => {
        const result = await admin.listAudit(filter, page);
        if (o.json) return writeJson(io, result);
        if (result.items.length === 0) return void io.out.write('no audit entry matches\n');
        io.out.write(renderTable(COLUMNS, result.items));
        if (result.nextBefore !== null) io.out.write(`more: add --before ${result.nextBefore}\n`);
      });
    });
}
