import { isOperator } from '../api.js';
import { bulkButton, inStore } from '../actions.js';
import { badge, h, timeWithAge } from '../dom.js';
import { listPage } from '../list-page.js';
import { firstLine, jobFilter } from './dead-letters.js';

/** Outbox rows: what the producer wrote and whether the relay got a confirm. */
export function outboxView({ query }) {
  return listPage({
    route: 'outbox',
    heading: 'Outbox',
    query,
    intro: 'Messages written by the producer. Pending rows wait for the relay; sent means the broker confirmed them.',
    fields: [
      { name: 'status', label: 'Status', kind: 'statuses', options: ['pending', 'sent', 'dead'] },
      { name: 'type', label: 'Type' },
      { name: 'key', label: 'Key' },
      { name: 'topic', label: 'Topic' },
      { name: 'error', label: 'Error contains' },
      { name: 'from', label: 'Created from', kind: 'time' },
      { name: 'to', label: 'Created before', kind: 'time' },
    ],
    columns: ['Message', 'Type', 'Key', 'Topic', 'Status', 'Attempts', 'Last error', 'Created', 'Sent'],
    row: (o) => [
      h(
        'a',
        { href: `#/messages/${encodeURIComponent(o.messageId)}`, title: `Open message ${o.messageId}` },
        o.messageId,
      ),
      o.type,
      o.key,
      o.topic,
      badge(o.status),
      String(o.attempts),
      h('span', { class: 'error-text' }, firstLine(o.lastError)),
      timeWithAge(o.createdAt),
      timeWithAge(o.sentAt),
    ],
    tools: (filter, store) =>
      isOperator()
        ? h(
            'div',
            { class: 'bulk', role: 'group', 'aria-label': 'Bulk actions' },
            bulkButton(
              'Resend all matching…',
              'outbox.resend',
              jobFilter(filter),
              `Publishes every outbox message${inStore(store)} matching the current filter again, with the same ids, as a job.`,
              'optional',
              store,
            ),
          )
        : null,
  });
}
