import type { LineageSearch } from '../lineage-search.js';
import { renderFields, renderTable, time, type Column } from './table.js';

type Lineage = LineageSearch['lineage'];
type Row<K extends 'inbox' | 'deadLetters'> = Lineage[K][number] & { store?: string };

/**
 * A message's lineage as text: its outbox row and attempts, the groups whose inbox holds it and its
 * dead letters. Over named databases, each part says which database it came from, and databases
 * that could not be asked are listed.
 */
export function renderLineage(found: LineageSearch): string {
  const { lineage } = found;
  const where = (store: string | undefined) => (found.named && store ? ` (in ${store})` : '');
  const out: string[] = [`message ${lineage.messageId}\n`];
  if (found.named) out.push(`looked in: ${found.databases.join(', ')}\n`);
  const row = lineage.outbox;
  out.push(`\noutbox${where((row as { store?: string } | null)?.store)}:\n`);
  if (!row) {
    const whose = found.named ? `the outbox of ${found.databases.join(' or ')}` : 'this outbox';
    out.push(`  not in ${whose} (another producer, or purged after sending)\n`);
  } else {
    out.push(
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
      out.push('\nattempts:\n');
      out.push(
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
  const database = <T extends { store?: string }>(): Column<T>[] =>
    found.named ? [{ header: 'DATABASE', value: (r) => r.store }] : [];
  out.push('\nconsumed by:\n');
  out.push(
    lineage.inbox.length
      ? renderTable<Row<'inbox'>>(
          [
            ...database<Row<'inbox'>>(),
            { header: 'GROUP', value: (i) => i.group },
            { header: 'RECORDED', value: (i) => time(i.recordedAt) },
          ],
          lineage.inbox,
        )
      : '  no inbox holds it\n',
  );
  out.push('\ndead letters:\n');
  out.push(
    lineage.deadLetters.length
      ? renderTable<Row<'deadLetters'>>(
          [
            ...database<Row<'deadLetters'>>(),
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
  if (found.named && found.lineage.unavailable.length) {
    out.push('\nnot asked (what they hold is missing above):\n');
    for (const u of found.lineage.unavailable) out.push(`  ${u.store}: ${u.error}\n`);
  }
  return out.join('');
}
