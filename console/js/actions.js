import { currentSession, get, isOperator, post } from './api.js';
import { confirmAction } from './dialog.js';
import { h } from './dom.js';
import { notify, refreshNow } from './shell.js';
import { isMultiStore, storeParam } from './stores.js';

/**
 * An action button. Viewers see it disabled with the reason (the API refuses them anyway); operators get a
 * confirmation dialog, then a notice with the outcome and any warning, then an immediate refresh. `dialog.prepare`,
 * when given, is awaited first and its answer completes the dialog (e.g. a description with a count); `dialog.done`
 * is the notice, or a function of the action's result that returns it.
 */
function actionButton(label, describe, dialog) {
  const operator = isOperator();
  return h(
    'button',
    {
      type: 'button',
      class: 'action',
      disabled: !operator || dialog.unavailable ? true : null,
      title: operator ? (dialog.unavailable ?? describe) : 'Only operators can act; your token is a viewer’s.',
      onclick: async () => {
        let prepared = {};
        try {
          prepared = dialog.prepare ? await dialog.prepare() : {};
        } catch (error) {
          notify(`${label} could not start: ${error.message}`, 'error');
          return;
        }
        const result = await confirmAction({ confirmLabel: label, ...dialog, ...prepared });
        if (result === undefined) return;
        const warnings = result?.warnings ?? [];
        notify(
          [
            typeof dialog.done === 'function' ? dialog.done(result) : dialog.done,
            ...warnings.map((w) => `Warning: ${typeof w === 'string' ? w : (w.message ?? JSON.stringify(w))}`),
          ].join(' '),
          warnings.length ? 'warning' : 'ok',
        );
        refreshNow();
      },
    },
    label,
  );
}

/** ` in store billing` when the server reads several stores; row ids are only unique within their store. */
export function inStore(store) {
  return isMultiStore() && store ? ` in store ${store}` : '';
}

/**
 * Replay, Ignore and (when the server allows it) Edit then replay, for one dead letter. Each request names the
 * row's `store` (a lineage row carries it).
 */
export function deadLetterActions(row) {
  const what = `dead letter ${row.id}${inStore(row.store)} (${row.type || 'undecodable'} for group ${row.group})`;
  const path = `dead-letters/${row.id}`;
  const query = { store: storeParam(row.store) };
  const replayable = ['pending', 'dead', 'ignored'].includes(row.status);
  const ignorable = ['pending', 'dead'].includes(row.status);
  const buttons = [
    actionButton('Replay', 'Make it due now; the consumer’s replay job runs it', {
      title: `Replay ${what}`,
      description:
        'The consumer’s replay job runs the handler again now, in the consumer’s own transaction. If the message was already handled it is resolved without running twice.',
      reason: 'optional',
      unavailable: replayable ? null : `A ${row.status} dead letter cannot be replayed.`,
      done: `Replay of dead letter ${row.id} requested.`,
      run: ({ reason }) => post(`${path}/replay`, reason ? { reason } : {}, query),
    }),
    actionButton('Ignore', 'Close it without running it; a reason is required', {
      title: `Ignore ${what}`,
      description: 'The dead letter is closed and never replayed automatically. The reason goes into the audit log.',
      reason: 'required',
      unavailable: ignorable ? null : `A ${row.status} dead letter cannot be ignored.`,
      done: `Dead letter ${row.id} ignored.`,
      run: ({ reason }) => post(`${path}/ignore`, { reason }, query),
    }),
  ];
  if (editAllowed()) {
    buttons.push(
      actionButton('Edit then replay', 'Change the body, then replay it', {
        title: `Edit and replay ${what}`,
        description:
          'The new body replaces the stored one (the previous body is kept in the history), then the dead letter is replayed.',
        reason: 'required',
        body: row.bodyEncoding === 'base64' ? undefined : row.body,
        unavailable: !replayable
          ? `A ${row.status} dead letter cannot be edited.`
          : row.bodyEncoding === 'base64'
            ? 'The body is not text.'
            : null,
        done: `Dead letter ${row.id} edited; replay requested.`,
        run: ({ reason, body }) => post(`${path}/edit`, { body, reason }, query),
      }),
    );
  }
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': `Actions for dead letter ${row.id}${inStore(row.store)}` },
    buttons,
  );
}

/** Resend, for one outbox row (in its `store`). */
export function outboxActions(row) {
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': `Actions for outbox message ${row.messageId}` },
    actionButton('Resend', 'Publish it again with the same message id', {
      title: `Resend ${row.type} ${row.messageId}${inStore(row.store)}`,
      description:
        'The relay publishes the message again with the same id (attempts start from 0). Consumers that already handled it skip it while their inbox still holds it.',
      reason: 'optional',
      done: `Resend of ${row.messageId} requested.`,
      run: ({ reason }) =>
        post(`outbox/${encodeURIComponent(row.messageId)}/resend`, reason ? { reason } : {}, {
          store: storeParam(row.store),
        }),
    }),
  );
}

/** Rows counted before a bulk action is confirmed: one page of the list. */
const COUNT_LIMIT = 500;

/**
 * Bulk actions by a list's current filter, each run by the server as a job in the list's store. Nothing for viewers.
 * Before the confirmation, the rows the job would act on are counted (up to {@link COUNT_LIMIT}) from the list at
 * `listPath`, so the operator sees how many it is. With no filter set, the job says `all: true` outright.
 *
 * @param {Record<string, string>} filter the list's applied filter (address strings)
 * @param {string} store
 * @param {string} listPath the list's API path, e.g. `dead-letters`
 * @param {Array<{label: string, kind: string, description: string, reason: 'required'|'optional',
 *   noun: [string, string], scope?: Record<string, string>, everything: string}>} actions `noun` is the row's name,
 *   singular and plural; `scope` the filter a job applies where the list's filter says nothing (a replay: status
 *   pending and dead); `everything` says what no filter means, e.g. "every pending or dead dead letter"
 */
export function bulkActions(filter, store, listPath, actions) {
  if (!isOperator()) return null;
  const unfiltered = Object.keys(filter).length === 0;
  return h(
    'div',
    { class: 'bulk', role: 'group', 'aria-label': 'Bulk actions' },
    actions.map(({ label, kind, description, reason, noun, scope, everything }) =>
      actionButton(label, description, {
        title: label,
        description,
        reason,
        prepare: async () => {
          const counted = await countMatching(listPath, { ...scope, ...filter }, store);
          const what = unfiltered
            ? `No filter is set: this acts on ${everything}${inStore(store)}.`
            : `Filter: ${describeFilter(filter)}.`;
          return { description: `${description} ${what} ${matches(counted, noun)}` };
        },
        done: ({ job }) =>
          job?.total === 0
            ? `Nothing matched: job ${job.id} ended at once, no row changed.`
            : `Job ${job?.id} started over ${job?.total} ${noun[1]}: follow it on the Jobs page.`,
        run: (input) =>
          post(
            'jobs',
            {
              kind,
              filter: toJobFilter(filter),
              ...(unfiltered ? { all: true } : {}),
              ...(input.reason ? { reason: input.reason } : {}),
            },
            { store: storeParam(store) },
          ),
      }),
    ),
  );
}

/** How many rows of the list match `filter` now: a number, or null for more than {@link COUNT_LIMIT}. */
async function countMatching(listPath, filter, store) {
  const page = await get(listPath, { ...filter, limit: COUNT_LIMIT, store: storeParam(store) });
  return page.nextBefore === null || page.nextBefore === undefined ? page.items.length : null;
}

function matches(counted, [one, many]) {
  if (counted === null) return `More than ${COUNT_LIMIT} ${many} match now.`;
  if (counted === 0) return `0 ${many} match now: the job would change nothing.`;
  return `${counted} ${counted === 1 ? `${one} matches` : `${many} match`} now.`;
}

/** `status = dead, group = billing` */
export function describeFilter(filter) {
  return Object.entries(filter)
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');
}

/** A list's filter (address strings) as a job's filter (the port's types). */
function toJobFilter(filter) {
  const out = {};
  for (const [name, value] of Object.entries(filter)) {
    if (name === 'status') out.status = value.split(',');
    else if (name === 'from' || name === 'to') out[name] = Date.parse(value);
    else if (name === 'poison') out.poison = value === 'true';
    else out[name] = value;
  }
  return out;
}

/** The server tells the session whether edit-then-replay is enabled; hidden unless it says so. */
function editAllowed() {
  const s = currentSession();
  return Boolean(s?.allowEdit ?? s?.features?.allowEdit ?? s?.features?.edit);
}
