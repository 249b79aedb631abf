import { get } from '../api.js';
import { throughputChart } from '../chart.js';
import { badge, count, duration, h, table, timeWithAge } from '../dom.js';
import { doctorReport } from '../doctor.js';
import { liveSection } from '../live.js';
import { isMultiStore, noteOverview, storeParam, unavailableStores } from '../stores.js';
import { DEAD_LETTER_STATUSES } from './dead-letters.js';

const DOCTOR_EVERY = 5; // refreshes (the doctor asks the broker too: every 10 s is enough)

/**
 * Counts on both sides, throughput, open dead letters grouped by cause, relays, and the doctor's verdict. With several
 * stores the server merges them (counts summed); a table per store says where the counts are and links to its lists.
 */
export function overviewView() {
  const overview = liveSection(
    'The overview',
    async () => {
      const answer = await get('overview');
      noteOverview(answer); // where each list opens
      return answer;
    },
    render,
  );
  const doctor = liveSection(
    'The doctor’s report',
    () =>
      get('doctor').catch((error) => {
        if (error.status === 404) return null;
        throw error;
      }),
    (report) =>
      report
        ? doctorReport(report)
        : h('p', {}, 'The doctor is not configured on this server (`surety doctor` runs it from the command line).'),
  );
  let refreshes = 0;
  return {
    title: 'Overview',
    nodes: [h('h1', {}, 'Overview'), overview.el, h('h2', {}, 'Doctor'), doctor.el],
    async refresh() {
      const due = refreshes % DOCTOR_EVERY === 0;
      refreshes += 1;
      await Promise.all([overview.refresh(), due ? doctor.refresh() : null]);
    },
  };
}

/** Dead letters due for a retry now; a running replayer takes them within its interval. */
const dueCount = (o) => (o.dueRetries ?? []).reduce((n, g) => n + g.count, 0);
const oldestDue = (o) => Math.min(...(o.dueRetries ?? []).map((g) => g.oldestDueAt));

function render(o) {
  const now = Date.now();
  const oldest = o.outbox.oldestPendingAt;
  const multi = isMultiStore();
  return [
    unavailableStores(o.unavailable, 'the counts below leave them out.'),
    h(
      'div',
      { class: 'tiles' },
      h(
        'section',
        { class: 'tile', 'aria-labelledby': 'producer-title' },
        h('h2', { id: 'producer-title' }, 'Producer (outbox)'),
        counts(
          [
            ['pending', o.outbox.pending, 'outbox'],
            ['sent', o.outbox.sent, 'outbox'],
            ['dead', o.outbox.dead, 'outbox'],
          ],
          multi,
        ),
        h('p', {}, 'Oldest pending: ', oldest === null ? 'none' : h('strong', {}, duration(now - oldest))),
      ),
      h(
        'section',
        { class: 'tile', 'aria-labelledby': 'consumer-title' },
        h('h2', { id: 'consumer-title' }, 'Consumers (dead letters)'),
        counts(
          DEAD_LETTER_STATUSES.map((st) => [st, o.deadLetters[st] ?? 0, 'dead-letters']),
          multi,
        ),
        h(
          'p',
          {},
          `Inbox: ${o.inboxSizeExact === false ? 'at least ' : ''}${count(o.inboxSize)} records. Due for a retry: `,
          h('strong', {}, count(dueCount(o))),
          dueCount(o) ? ` (oldest due ${duration(now - oldestDue(o))} ago)` : '',
          '. Left by a replayer that died, pending again: ',
          h('strong', {}, count(o.expiredLeases)),
          '.',
        ),
      ),
    ),
    multi ? [h('h2', {}, 'By store'), storesTable(o.stores ?? [], now)] : null,
    h('h2', {}, 'Throughput'),
    throughputChart(o.throughput),
    h('h2', {}, 'Open dead letters by cause'),
    table(
      'Open dead letters (pending, replaying, dead) grouped by type, group and error',
      [...(multi ? ['Store'] : []), 'Type', 'Group', 'Error', 'Count', 'Oldest'],
      o.deadLetterGroups.map((g) => [
        ...(multi ? [g.store] : []),
        g.type || h('em', {}, 'undecodable'),
        g.group,
        h(
          'a',
          {
            href: `#/dead-letters?${new URLSearchParams({
              ...(storeParam(g.store) ? { store: g.store } : {}),
              status: 'pending,replaying,dead',
              ...(g.type ? { type: g.type } : {}),
              group: g.group,
              error: g.error.slice(0, 200),
            })}`,
          },
          g.error || '(no message)',
        ),
        count(g.count),
        timeWithAge(g.oldestAt),
      ]),
      'No open dead letters.',
    ),
    h('h2', {}, 'Relays'),
    table(
      'Running relays and when each last claimed',
      [...(multi ? ['Store'] : []), 'Relay', 'Host', 'PID', 'Started', 'Last claimed', 'Last seen'],
      o.relays.map((r) => [
        ...(multi ? [r.store] : []),
        r.relayId,
        r.host,
        String(r.pid),
        timeWithAge(r.startedAt),
        r.lastClaimedAt === null ? 'never' : `${duration(now - r.lastClaimedAt)} ago`,
        `${duration(now - r.lastSeenAt)} ago`,
      ]),
      'No relay has reported in.',
    ),
  ];
}

/**
 * Counts by status, each a link to the list filtered by it. Summed over several stores they are not one list's rows:
 * then plain counts, and the per-store table links.
 */
function counts(entries, summed) {
  return h(
    'ul',
    { class: 'counts' },
    entries.map(([status, n, route]) =>
      h(
        'li',
        {},
        h(
          summed ? 'span' : 'a',
          summed
            ? { role: 'group', 'aria-label': `${count(n)} ${status}` }
            : { href: `#/${route}?status=${status}`, 'aria-label': `${count(n)} ${status}` },
          h('span', { class: 'n' }, count(n)),
          ' ',
          badge(status),
        ),
      ),
    ),
  );
}

/** One row per store: where the pending outbox rows and the open dead letters are. */
function storesTable(stores, now) {
  const link = (store, route, status, n, what = status) =>
    h(
      'a',
      { href: `#/${route}?${new URLSearchParams({ store, status })}`, 'aria-label': `${count(n)} ${what} in ${store}` },
      count(n),
    );
  return table(
    'Counts per store, each a link to that store’s list',
    ['Store', 'Outbox pending', 'Oldest pending', 'Dead letters open', 'Dead letters dead'],
    stores.map(({ name, overview: o }) => {
      const open = (o.deadLetters.pending ?? 0) + (o.deadLetters.replaying ?? 0) + (o.deadLetters.dead ?? 0);
      return [
        name,
        link(name, 'outbox', 'pending', o.outbox.pending),
        o.outbox.oldestPendingAt === null ? 'none' : duration(now - o.outbox.oldestPendingAt),
        link(name, 'dead-letters', 'pending,replaying,dead', open, 'open'),
        link(name, 'dead-letters', 'dead', o.deadLetters.dead ?? 0),
      ];
    }),
    'No store answered.',
  );
}
