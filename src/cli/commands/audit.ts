import type { Command } from 'commander';
import { AUDIT_ACTIONS, auditFilterSchema } from '../../admin/admin-schemas.js';
import type { AuditEntry } from '../../ports/admin-store.js';
import { withAdmin, withCommonOptions, type CommonOptions } from '../context.js';
import { parseFilterFlags, withTimeRangeOptions } from '../flags.js';
import type { CliIo } from '../io.js';
import { pageOf, printPage, withPageOptions, type PageFlags } from '../list-page.js';
import { time, type Column } from '../output/table.js';

interface AuditFlags extends CommonOptions, PageFlags {
  actor?: string;
  action?: string;
  target?: string;
  since?: string;
  until?: string;
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
  const audit = withCommonOptions(
    program.command('audit').description('the audit log of operator actions, newest first'),
  )
    .option('--actor <name>', 'e.g. cli:alice or a token name')
    .option('--action <action>', AUDIT_ACTIONS.join(', '))
    .option('--target <target>', 'dlq:<id>, outbox:<messageId> or job:<id>');
  withPageOptions(withTimeRangeOptions(audit), 'entries', 'id').action(async (o: AuditFlags) => {
    const { actor, action, target, since, until } = o;
    const filter = parseFilterFlags(auditFilterSchema, { actor, action, target, since, until }, Date.now());
    const page = pageOf(o);
    await withAdmin(o, io, async ({ admin }) =>
      printPage(io, o.json, await admin.listAudit(filter, page), COLUMNS, 'no audit entry matches'),
    );
  });
}
