// The databases the server reads (`GET /api/stores`) and which one the list views show.
import { get } from './api.js';
import { h } from './dom.js';

/** `[{ name, dialect, default }]`; one unnamed entry until loaded (or when the server predates several stores). */
let stores = [{ name: 'default', dialect: '', default: true }];
/** The store the reader last chose; list links keep it when the address does not say. */
let chosen = null;
/** What each store holds, from the last overview: where a list opens when the reader has not chosen. */
let holdings = [];

export async function loadStores() {
  try {
    const answer = await get('stores');
    if (Array.isArray(answer?.stores) && answer.stores.length) stores = answer.stores;
  } catch (error) {
    // A server without the endpoint serves one store.
    if (error.status !== 404) throw error;
  }
  if (!stores.some((s) => s.name === chosen)) chosen = null;
  // Without it lists open on the default store, as with one store: worth a try, not an error.
  if (isMultiStore()) noteOverview(await get('overview').catch(() => null));
  return stores;
}

/** Keeps what each store holds up to date; the overview page passes every overview it loads. */
export function noteOverview(overview) {
  if (!Array.isArray(overview?.stores)) return;
  holdings = overview.stores.map(({ name, overview: o }) => ({
    name,
    openDeadLetters: (o.deadLetters?.pending ?? 0) + (o.deadLetters?.replaying ?? 0) + (o.deadLetters?.dead ?? 0),
    unsentOutbox: (o.outbox?.pending ?? 0) + (o.outbox?.dead ?? 0),
    outbox: (o.outbox?.pending ?? 0) + (o.outbox?.dead ?? 0) + (o.outbox?.sent ?? 0),
  }));
}

/**
 * Where a list opens when neither the address nor the reader says: the first store, in display order, that holds what
 * that list is for. Dead letters, and the audit log and jobs of the operators who act on them, where dead letters are
 * open; the outbox where unsent rows wait, else where any row is. Undefined when no store holds any.
 */
function suggestedStore(route) {
  const first = (pick) => holdings.find((s) => pick(s) > 0)?.name;
  if (route === '/outbox') return first((s) => s.unsentOutbox) ?? first((s) => s.outbox);
  return first((s) => s.openDeadLetters) ?? first((s) => s.unsentOutbox);
}

export function storeList() {
  return stores;
}

/** True when the server reads more than one database: then pages name the store of what they show. */
export function isMultiStore() {
  return stores.length > 1;
}

export function defaultStore() {
  return (stores.find((s) => s.default) ?? stores[0]).name;
}

/**
 * The store a list view (`route`, e.g. `/dead-letters`) shows: the address's `store`, else the one the reader last
 * chose, else the one holding what the list is for, else the default.
 */
export function storeOf(query, route) {
  return query.get('store') || chosen || (route && suggestedStore(route)) || defaultStore();
}

/** The store the reader chose, if any. */
export function chosenStore() {
  return chosen;
}

export function choose(name) {
  chosen = name;
}

/** The `store` query parameter for a request, or undefined (the server's default) with one store. */
export function storeParam(name) {
  return isMultiStore() && name ? name : undefined;
}

/** An alert naming the stores that did not answer (a merged answer's `unavailable`), and what that leaves out. */
export function unavailableStores(list, consequence) {
  if (!list?.length) return null;
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('strong', {}, 'Not every store answered: '),
    consequence,
    h(
      'ul',
      {},
      list.map((u) => h('li', {}, `${u.store}: ${u.error}`)),
    ),
  );
}
