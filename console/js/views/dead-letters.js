import { isOperator } from '../api.js';
import { bulkButton, inStore } from '../actions.js';
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
      h(
        'a',
        { href: `#/messages/${encodeURIComponent(d.messageId)}`, title: `Open message ${d.messageId}` },
        d.messageId,
      ),
      d.type || h('em', {}, 'undecodable'),
      d.key,
      d.group,
      badge(d.status),
      String(d.attempts),
      h('span', { class: 'error-text' }, firstLine(d.lastError)),
      timeWithAge(d.createdAt),
      d.status === 'pending' ? timeWithAge(d.nextRetryAt) : '—',
    ],
    tools: (filter, store) =>
      isOperator()
        ? h(
            'div',
            { class: 'bulk', role: 'group', 'aria-label': 'Bulk actions' },
            bulkButton(
              'Replay all matching…',
              'dlq.replay',
              jobFilter(filter),
              `Replays every dead letter${inStore(store)} matching the current filter (${describe(filter)}), in batches, as a job.`,
              'optional',
              store,
            ),
            bulkButton(
              'Ignore all matching…',
              'dlq.ignore',
              jobFilter(filter),
              `Ignores every dead letter${inStore(store)} matching the current filter (${describe(filter)}), in batches, as a job.`,
              'required',
              store,
            ),
          )
        : null,
  });
}

export function firstLine(text) {
  if (!text) return '';
  const line = String(text).split('\n', 1)[0];
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

/** The list's filter (address strings) as a job's filter (the port's types). */
export function jobFilter(filter) {
  const out = {};
  for (const [name, value] of Object.entries(filter)) {
    if (name === 'status') out.status = value.split(',');
    else if (name === 'from' || name === 'to') out[name] = Date.parse(value);
    else if (name === 'poison') out.poison = value === 'true';
    else out[name] = value;
  }
  return out;
}

function describe(filter) {
  const parts = Object.entries(filter).map(([k, v]) => `${k} = ${v}`);
  return parts.length ? parts.join(', ') : 'no filter: all of them';
}
