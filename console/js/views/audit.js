import { badge, h, timeWithAge } from '../dom.js';
import { listPage } from '../list-page.js';
import { storeParam } from '../stores.js';

/** Every operator action, refusals included. */
export function auditView({ query }) {
  return listPage({
    route: 'audit',
    heading: 'Audit log',
    query,
    intro: 'Who did what, when, why, and how it ended. Refused attempts are recorded too.',
    fields: [
      { name: 'actor', label: 'Actor' },
      { name: 'action', label: 'Action' },
      { name: 'target', label: 'Target' },
      { name: 'from', label: 'From', kind: 'time' },
      { name: 'to', label: 'Before', kind: 'time' },
    ],
    columns: ['When', 'Actor', 'Role', 'Action', 'Target', 'Reason', 'Outcome'],
    row: (a, store) => [
      timeWithAge(a.at),
      a.actor,
      a.role,
      a.action,
      target(a.target, store),
      a.reason ?? '—',
      badge(a.outcome),
    ],
  });
}

/**
 * `outbox:<id>` and `dlq:<id>` link to the message; other targets are shown as they are. A dead letter's id is only
 * unique in its store, which is the store of the audit log shown.
 */
function target(text, store) {
  const outbox = /^outbox:(.+)$/.exec(text ?? '');
  if (outbox) return h('a', { href: `#/messages/${encodeURIComponent(outbox[1])}` }, text);
  const dlq = /^dlq:(\d+)$/.exec(text ?? '');
  const param = storeParam(store);
  if (dlq)
    return h('a', { href: `#/dead-letters/${dlq[1]}${param ? `?store=${encodeURIComponent(param)}` : ''}` }, text);
  return text;
}
