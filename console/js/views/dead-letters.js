import { bulkActions, inStore } from '../actions.js';
import { errorCell, messageLink } from '../cells.js';
import { badge, h, timeWithAge } from '../dom.js';
import { listPage } from '../list-page.js';

export const DEAD_LETTER_STATUSES = ['pending', 'replaying', 'resolved', 'ignored', 'dead'];

/** Dead letters of every consumer group, with the API's filters and bulk actions by filter. */
export function deadLettersView({ query }) {
  return listPage({
    route: 'dead-letters',
    heading: 'Dead letters',
    query,
    intro:
      'Deliveries a consumer failed to handle. Pending rows are retried by the replay job on their schedule; dead rows wait for you.',
    fields: [
      { name: 'status', label: 'Status', kind: 'statuses', options: DEAD_LETTER_STATUSES },
      { name: 'type', label: 'Type' },
      { name: 'key', label: 'Key' },
      { name: 'group', label: 'Consumer group' },
      { name: 'error', label: 'Error contains' },
      { name: 'poison', label: 'Undecodable (poison)', kind: 'select', options: ['true', 'false'] },
      { name: 'from', label: 'Created from', kind: 'time' },
      { name: 'to', label: 'Created before', kind: 'time' },
    ],
    columns: ['Message', 'Type', 'Key', 'Group', 'Status', 'Attempts', 'Last error', 'Created', 'Next retry'],
    row: (d) => [
      messageLink(d.messageId),
      d.type || h('em', {}, 'undecodable'),
      d.key,
      d.group,
      badge(d.status),
      String(d.attempts),
      errorCell(d.lastError),
      timeWithAge(d.createdAt),
      d.status === 'pending' ? timeWithAge(d.nextRetryAt) : '—',
    ],
    tools: (filter, store) =>
      bulkActions(filter, store, 'dead-letters', [
        {
          label: 'Replay all matching…',
          kind: 'dlq.replay',
          description: `Replays every dead letter${inStore(store)} matching the current filter, in batches, as a job. Ignored rows are replayed only when the status filter names them.`,
          reason: 'optional',
          noun: ['dead letter', 'dead letters'],
          // What the server replays when the filter names no status.
          scope: { status: 'pending,dead' },
          everything: 'every pending or dead dead letter',
        },
        {
          label: 'Ignore all matching…',
          kind: 'dlq.ignore',
          description: `Ignores every dead letter${inStore(store)} matching the current filter that is pending or dead, in batches, as a job.`,
          reason: 'required',
          noun: ['dead letter', 'dead letters'],
          everything: 'every dead letter',
        },
      ]),
  });
}
