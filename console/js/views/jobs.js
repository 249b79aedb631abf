import { get, isOperator, post } from '../api.js';
import { confirmAction } from '../dialog.js';
import { badge, count, h, table, timeWithAge } from '../dom.js';
import { liveSection } from '../live.js';
import { notify, refreshNow } from '../shell.js';
import { isMultiStore, storeOf, storeParam } from '../stores.js';

/** Bulk actions by filter and how far each has got, in the store chosen (jobs live in the store they act on). */
export function jobsView({ query }) {
  const store = storeOf(query, '/jobs');
  const jobs = liveSection(
    'The jobs',
    () => get('jobs', { limit: 100, store: storeParam(store) }),
    (page) =>
      table(
        `Bulk jobs${isMultiStore() ? ` in store ${store}` : ''}, newest first`,
        ['Job', 'Action', 'Filter', 'Progress', 'Changed', 'Status', 'By', 'Reason', 'Started', ''],
        page.items.map((j) => [
          String(j.id),
          j.kind,
          h('code', {}, JSON.stringify(j.filter)),
          progress(j),
          count(j.changed),
          [badge(j.status), j.error ? h('div', { class: 'error-text' }, j.error) : null],
          j.actor,
          j.reason ?? '—',
          timeWithAge(j.createdAt),
          j.status === 'running' ? cancelButton(j, store) : '',
        ]),
        'No bulk jobs yet. Start one from the dead-letter or outbox list (“all matching”).',
      ),
  );
  return {
    title: 'Jobs',
    nodes: [h('h1', {}, 'Jobs'), jobs.el],
    refresh: () => jobs.refresh(),
  };
}

function progress(j) {
  const label = `Job ${j.id}: ${j.done} of ${j.total}`;
  return h(
    'div',
    { class: 'progress' },
    h('progress', { max: Math.max(1, j.total), value: j.done, 'aria-label': label }),
    ` ${count(j.done)} / ${count(j.total)} at ≤ ${j.ratePerSecond}/s`,
  );
}

function cancelButton(j, store) {
  return h(
    'button',
    {
      type: 'button',
      disabled: !isOperator(),
      title: isOperator() ? 'Stop after the batch in hand' : 'Only operators can act; your token is a viewer’s.',
      onclick: async () => {
        const done = await confirmAction({
          title: `Stop job ${j.id}`,
          description: 'The job stops after the batch in hand; rows already done stay done.',
          confirmLabel: 'Stop job',
          run: () => post(`jobs/${j.id}/cancel`, {}, { store: storeParam(store) }),
        });
        if (done === undefined) return;
        notify(`Job ${j.id} cancelled.`);
        refreshNow();
      },
    },
    'Stop job',
  );
}
