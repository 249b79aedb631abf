import { get } from '../api.js';
import { throughputChart } from '../chart.js';
import { badge, count, duration, h, table, timeWithAge } from '../dom.js';
import { doctorReport } from '../doctor.js';
import { liveSection } from '../live.js';
import { DEAD_LETTER_STATUSES } from './dead-letters.js';

const DOCTOR_EVERY = 5; // refreshes (the doctor asks the broker too: every 10 s is enough)

/** Counts on both sides, throughput, open dead letters grouped by cause, relays, and the doctor's verdict. */
export function overviewView() {
  const overview = liveSection('The overview', () => get('overview'), render);
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

function render(o) {
  const now = Date.now();
  const oldest = o.outbox.oldestPendingAt;
  return [
    h(
      'div',
      { class: 'tiles' },
      h(
        'section',
        { class: 'tile', 'aria-labelledby': 'producer-title' },
        h('h2', { id: 'producer-title' }, 'Producer (outbox)'),
        counts([
          ['pending', o.outbox.pending, 'outbox'],
          ['sent', o.outbox.sent, 'outbox'],
          ['dead', o.outbox.dead, 'outbox'],
        ]),
        h('p', {}, 'Oldest pending: ', oldest === null ? 'none' : h('strong', {}, duration(now - oldest))),
      ),
      h(
        'section',
        { class: 'tile', 'aria-labelledby': 'consumer-title' },
        h('h2', { id: 'consumer-title' }, 'Consumers (dead letters)'),
        counts(DEAD_LETTER_STATUSES.map((st) => [st, o.deadLetters[st] ?? 0, 'dead-letters'])),
        h(
          'p',
          {},
          `Inbox: ${count(o.inboxSize)} records. Replays with an expired lease: `,
          h('strong', {}, count(o.expiredLeases)),
          '.',
        ),
      ),
    ),
    h('h2', {}, 'Throughput'),
    throughputChart(o.throughput),
    h('h2', {}, 'Open dead letters by cause'),
    table(
      'Open dead letters (pending, replaying, dead) grouped by type, group and error',
      ['Type', 'Group', 'Error', 'Count', 'Oldest'],
      o.deadLetterGroups.map((g) => [
        g.type || h('em', {}, 'undecodable'),
        g.group,
        h(
          'a',
          {
            href: `#/dead-letters?${new URLSearchParams({
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
      ['Relay', 'Host', 'PID', 'Started', 'Last claimed', 'Last seen'],
      o.relays.map((r) => [
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

/** Counts by status, each a link to the list filtered by it. */
function counts(entries) {
  return h(
    'ul',
    { class: 'counts' },
    entries.map(([status, n, route]) =>
      h(
        'li',
        {},
        h(
          'a',
          { href: `#/${route}?status=${status}`, 'aria-label': `${count(n)} ${status}` },
          h('span', { class: 'n' }, count(n)),
          ' ',
          badge(status),
        ),
      ),
    ),
  );
}
