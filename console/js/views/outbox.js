import { bulkActions, inStore } from '../actions.js';
import { errorCell, messageLink } from '../cells.js';
import { badge, timeWithAge } from '../dom.js';
import { listPage } from '../list-page.js';

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
      messageLink(o.messageId),
      o.type,
      o.key,
      o.topic,
      badge(o.status),
      String(o.attempts),
      errorCell(o.lastError),
      timeWithAge(o.createdAt),
      timeWithAge(o.sentAt),
    ],
    tools: (filter, store) =>
      bulkActions(filter, store, 'outbox', [
        {
          label: 'Resend all matching…',
          kind: 'outbox.resend',
          description: `Publishes every outbox message${inStore(store)} matching the current filter again, with the same ids, as a job.`,
          reason: 'optional',
          noun: ['outbox message', 'outbox messages'],
          everything: 'every outbox message, sent ones included',
        },
      ]),
  });
}
