import { currentSession, isOperator, post } from './api.js';
import { confirmAction } from './dialog.js';
import { h } from './dom.js';
import { notify, refreshNow } from './shell.js';
import { isMultiStore, storeParam } from './stores.js';

/**
 * An action button. Viewers see it disabled with the reason (the API refuses them anyway); operators get a
 * confirmation dialog, then a notice with the outcome and any warning, then an immediate refresh.
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
        const result = await confirmAction({ confirmLabel: label, ...dialog });
        if (result === undefined) return;
        const warnings = result?.warnings ?? [];
        notify(
          [
            dialog.done,
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

/**
 * Bulk actions by a list's current filter (`[{ label, kind, description, reason }]`), each run by the server as a job
 * in the list's store. Nothing for viewers.
 */
export function bulkActions(filter, store, actions) {
  if (!isOperator()) return null;
  const jobFilter = toJobFilter(filter);
  return h(
    'div',
    { class: 'bulk', role: 'group', 'aria-label': 'Bulk actions' },
    actions.map(({ label, kind, description, reason }) =>
      actionButton(label, description, {
        title: label,
        description,
        reason,
        done: 'Job started: follow it on the Jobs page.',
        run: (input) =>
          post(
            'jobs',
            { kind, filter: jobFilter, ...(input.reason ? { reason: input.reason } : {}) },
            { store: storeParam(store) },
          ),
      }),
    ),
  );
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
