import { get } from '../api.js';
import { deadLetterActions, inStore, outboxActions } from '../actions.js';
import { badge, count, facts, h, time, timeWithAge } from '../dom.js';
import { liveSection } from '../live.js';
import { isMultiStore, storeOf, storeParam, unavailableStores } from '../stores.js';

const DEAD_LETTER_EVENTS = {
  failed: 'Delivery failed',
  dead: 'Gave up: dead',
  replay_failed: 'Replay failed',
  resolved: 'Resolved',
  replay_requested: 'Replay requested',
  ignored: 'Ignored',
  edited: 'Body edited',
};

const OUTBOX_EVENTS = { failed: 'Publish failed', dead: 'Publish gave up: dead', resent: 'Resend requested' };

/**
 * One message across producer, broker and consumers: its lineage as a timeline, and what can be done about it.
 * The server merges every store it reads; with more than one, each event and section names its store.
 */
export function messageView({ params: [messageId] }) {
  const lineage = liveSection(
    'The message',
    () => get(`messages/${encodeURIComponent(messageId)}/lineage`),
    (l) => [
      unavailableStores(l.unavailable, 'what they hold is missing below.'),
      h('p', { class: 'where' }, where(l)),
      h('h2', {}, 'Timeline'),
      timeline(l),
      l.outbox ? outboxSection(l.outbox) : h('p', {}, 'No outbox row: the producer’s outbox does not know this id.'),
      l.deadLetters.map(deadLetterSection),
    ],
  );
  return {
    title: `Message ${messageId}`,
    nodes: [h('h1', {}, 'Message ', h('code', {}, messageId)), lineage.el],
    refresh: () => lineage.refresh(),
  };
}

/** `#/dead-letters/<id>?store=<name>` (e.g. from the audit log): looks up the row, then shows its message. */
export function deadLetterRedirectView({ params: [id], query }) {
  const store = storeOf(query);
  const section = liveSection(
    `Dead letter ${id}`,
    async () => {
      const row = await get(`dead-letters/${encodeURIComponent(id)}`, { store: storeParam(store) });
      location.replace(`#/messages/${encodeURIComponent(row.messageId)}`);
      return row;
    },
    () => h('p', {}, 'Opening its message…'),
  );
  return {
    title: `Dead letter ${id}`,
    nodes: [h('h1', {}, `Dead letter ${id}`), section.el],
    refresh: () => section.refresh(),
  };
}

/** One sentence on where the message is now. */
function where(l) {
  const parts = [];
  if (l.outbox) {
    parts.push(
      l.outbox.status === 'sent'
        ? `Published (confirmed ${time(l.outbox.sentAt)}).`
        : l.outbox.status === 'dead'
          ? 'Never left the producer: the relay gave up (dead).'
          : `Waiting in the outbox (pending, ${l.outbox.attempts} failed attempts).`,
    );
  }
  if (l.inbox.length) parts.push(`Handled by ${l.inbox.map((i) => `${i.group}${inStore(i.store)}`).join(', ')}.`);
  const open = l.deadLetters.filter((d) => ['pending', 'replaying', 'dead'].includes(d.status));
  if (open.length) {
    parts.push(`Failing in ${open.map((d) => `${d.group}${inStore(d.store)} (${d.status})`).join(', ')}.`);
  }
  return parts.join(' ') || 'No trace of this message.';
}

const CONFIRMED = 'Publish confirmed by the broker';

function timeline(l) {
  const events = [];
  if (l.outbox) {
    const o = l.outbox;
    events.push({ at: o.createdAt, stage: 'producer', store: o.store, text: 'Written to the outbox' });
    for (const a of o.history) {
      // A resend replaces the row's sent time; its history row keeps the confirm it replaced.
      if (a.outcome === 'resent' && a.confirmedAt !== null && a.confirmedAt !== undefined) {
        events.push({ at: a.confirmedAt, stage: 'broker', store: o.store, text: CONFIRMED });
      }
      events.push({
        at: a.at,
        stage: 'producer',
        store: o.store,
        text: `${OUTBOX_EVENTS[a.outcome] ?? a.outcome}${a.outcome === 'resent' ? '' : ` (attempt ${a.attempt})`}`,
        actor: a.actor,
        detail: a.error,
      });
    }
    // Recorded by the relay in the producer's store.
    if (o.sentAt !== null) events.push({ at: o.sentAt, stage: 'broker', store: o.store, text: CONFIRMED });
  }
  for (const i of l.inbox) {
    events.push({ at: i.recordedAt, stage: `consumer ${i.group}`, store: i.store, text: 'Handled (inbox recorded)' });
  }
  for (const d of l.deadLetters) {
    if (!d.history.length) {
      events.push({
        at: d.createdAt,
        stage: `consumer ${d.group}`,
        store: d.store,
        text: 'Dead letter written',
        detail: d.lastError,
      });
    }
    for (const e of d.history) {
      events.push({
        at: e.at,
        stage: `consumer ${d.group}`,
        store: d.store,
        text: `${DEAD_LETTER_EVENTS[e.kind] ?? e.kind}${e.kind.includes('fail') || e.kind === 'dead' ? ` (attempt ${e.attempt})` : ''}`,
        actor: e.actor,
        detail: e.detail,
        pre: e.kind === 'edited',
      });
    }
  }
  causalOrder(events);
  const named = isMultiStore();
  return h(
    'ol',
    { class: 'timeline', 'aria-label': 'Timeline' },
    events.map((e) =>
      h(
        'li',
        { 'data-key': `${e.stage} ${e.at} ${e.text}` },
        timeWithAge(e.at),
        named && e.store ? h('span', { class: 'store', title: `In store ${e.store}` }, e.store) : null,
        h('span', { class: 'stage' }, e.stage),
        h('span', { class: 'event' }, e.text),
        e.actor ? h('span', { class: 'actor' }, ` by ${e.actor}`) : null,
        e.detail ? (e.pre ? h('pre', { class: 'detail' }, e.detail) : h('div', { class: 'detail' }, e.detail)) : null,
      ),
    ),
  );
}

/**
 * Sorts by time, except that a confirm comes before what it caused. The relay records a confirm when it marks the
 * row, a moment after the broker confirmed, and a fast consumer can be earlier; so each confirm sorts no later than
 * the first consumer event after the producer event before it (the write, or the resend that led to it). The time
 * shown stays the recorded one; events of one instant keep the order they were added in.
 */
function causalOrder(events) {
  const producer = events.filter((e) => e.stage === 'producer').map((e) => e.at);
  const consumer = events.filter((e) => e.stage.startsWith('consumer')).map((e) => e.at);
  for (const e of events) {
    if (e.stage !== 'broker') continue;
    const cause = Math.max(-Infinity, ...producer.filter((at) => at <= e.at));
    const effect = Math.min(...consumer.filter((at) => at >= cause));
    e.sortAt = Math.min(e.at, effect);
  }
  events.sort((a, b) => (a.sortAt ?? a.at) - (b.sortAt ?? b.at));
}

function outboxSection(o) {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'outbox-title' },
    h('h2', { id: 'outbox-title' }, `Outbox row${inStore(o.store)}`),
    facts([
      ['Status', badge(o.status)],
      ['Type', o.type],
      ['Key', o.key],
      ['Topic', o.topic],
      ['Attempts', count(o.attempts)],
      ['Created', timeWithAge(o.createdAt)],
      ['Sent', timeWithAge(o.sentAt)],
      ['Next attempt', o.status === 'pending' ? timeWithAge(o.nextAttemptAt) : '—'],
      ['Last error', o.lastError ?? '—'],
    ]),
    outboxActions(o),
    h('details', {}, h('summary', {}, 'Payload'), h('pre', {}, pretty(o.payload))),
  );
}

/** The replayer holding the row; on a pending row, one whose lease ran out (it died), so nobody holds it. */
function claim(d) {
  if (!d.claimedBy) return '—';
  if (d.status === 'replaying') return `${d.claimedBy}, lease until ${time(d.leaseUntil)}`;
  return `${d.claimedBy}: its lease ended ${time(d.leaseUntil)} (the replayer died); nobody holds it now`;
}

function deadLetterSection(d) {
  // Ids repeat across stores.
  const titleId = `dl-${d.store ?? ''}-${d.id}-title`;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': titleId },
    h('h2', { id: titleId }, `Dead letter ${d.id} in group ${d.group}${inStore(d.store)}`),
    facts([
      ['Status', badge(d.status)],
      ['Type', d.type || 'undecodable (poison)'],
      ['Attempts', count(d.attempts)],
      ['Next retry', d.status === 'pending' ? timeWithAge(d.nextRetryAt) : '—'],
      ['Claim', claim(d)],
      ['Last error', h('span', { class: 'error-text' }, d.lastError || '—')],
      ['Ignored because', d.ignoredReason ?? '—'],
      ['Created', timeWithAge(d.createdAt)],
      ['Updated', timeWithAge(d.updatedAt)],
    ]),
    deadLetterActions(d),
    h(
      'details',
      {},
      h('summary', {}, 'Body'),
      h('pre', {}, d.bodyEncoding === 'base64' ? `(base64) ${d.body}` : pretty(d.body)),
    ),
  );
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
