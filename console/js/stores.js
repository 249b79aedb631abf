// The databases the server reads (`GET /api/stores`) and which one the list views show.
import { get } from './api.js';
import { h } from './dom.js';

/** `[{ name, dialect, default }]`; one unnamed entry until loaded (or when the server predates several stores). */
let stores = [{ name: 'default', dialect: '', default: true }];
/** The store the reader last chose; list links keep it when the address does not say. */
let chosen = null;

export async function loadStores() {
  try {
    const answer = await get('stores');
    if (Array.isArray(answer?.stores) && answer.stores.length) stores = answer.stores;
  } catch (error) {
    // A server without the endpoint serves one store.
    if (error.status !== 404) throw error;
  }
  if (!stores.some((s) => s.name === chosen)) chosen = null;
  return stores;
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

/** The store a list view shows: the address's `store`, else the one last chosen, else the default. */
export function storeOf(query) {
  return query.get('store') || chosen || defaultStore();
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
