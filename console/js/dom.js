// Builds DOM nodes from data. Text always goes in as text nodes, never as markup: message bodies and errors are untrusted.

/**
 * `h('button', { type: 'button', onclick: fn }, 'Replay')`. Attributes named `on…` become listeners, `class` and
 * `hidden`/`disabled`/`required` are handled, `null`/`false` attributes are left out; children may be nested arrays.
 */
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** The same for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs, children);
}

/** The listeners `h` attached to each element, so that {@link morph} can hand them to the element it keeps. */
const listeners = new WeakMap();

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
      listeners.set(el, [...(listeners.get(el) ?? []), [name.slice(2), value]]);
    } else if (name === 'value' && 'value' in el) el.value = value;
    else if (name === 'checked') el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * Makes the children of `el` equal to `children` while keeping every node that stays the same kind in the same place:
 * an element of the same tag is updated in place (attributes, listeners, then its own children) and a text node gets
 * its new text only if it changed. So a redraw leaves keyboard focus, a text selection and what the reader opened
 * (`<details>`) alone wherever the content did not change. Listeners move to the kept element, so a button always
 * acts on the data it shows now.
 */
export function morph(el, ...children) {
  const fresh = document.createDocumentFragment();
  append(fresh, children);
  patchChildren(el, [...fresh.childNodes]);
  return el;
}

/**
 * Keyed where the nodes say (`data-key` or `id`: list rows, timeline events), by position otherwise. New nodes go in
 * before the first old one still unmatched and old nodes that went away are removed at the end, so a row added or
 * dropped never moves the rows around it (moving a node would take the focus off it).
 */
function patchChildren(el, wanted) {
  const byKey = new Map();
  for (const old of el.childNodes) if (keyOf(old) !== null) byKey.set(keyOf(old), old);
  const wantedKeys = new Set(wanted.map(keyOf).filter((k) => k !== null));
  const kept = new Set();
  let cursor = el.firstChild;
  const skipGone = () => {
    while (cursor && keyOf(cursor) !== null && !wantedKeys.has(keyOf(cursor))) cursor = cursor.nextSibling;
  };
  for (const node of wanted) {
    skipGone();
    const key = keyOf(node);
    let match = null;
    if (cursor && !kept.has(cursor) && keyOf(cursor) === key && sameKind(cursor, node)) match = cursor;
    else if (key !== null && byKey.has(key) && sameKind(byKey.get(key), node) && !kept.has(byKey.get(key)))
      match = byKey.get(key);
    if (!match) {
      el.insertBefore(node, cursor);
      continue;
    }
    kept.add(match);
    if (match === cursor) cursor = cursor.nextSibling;
    else el.insertBefore(match, cursor); // reordered: rare
    if (match.nodeType === Node.TEXT_NODE) {
      if (match.nodeValue !== node.nodeValue) match.nodeValue = node.nodeValue;
    } else patchElement(match, node);
  }
  for (const old of [...el.childNodes]) if (!kept.has(old) && !wanted.includes(old)) old.remove();
}

function keyOf(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  return node.getAttribute('data-key') ?? (node.id || null);
}

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  return a.nodeType !== Node.ELEMENT_NODE || a.tagName === b.tagName;
}

function patchElement(old, node) {
  for (const { name } of [...old.attributes]) {
    // What the reader opened stays open.
    if (name === 'open' && old.tagName === 'DETAILS') continue;
    if (!node.hasAttribute(name)) old.removeAttribute(name);
  }
  for (const { name, value } of [...node.attributes]) {
    if (name === 'open' && old.tagName === 'DETAILS') continue;
    if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
  if ('disabled' in old) old.disabled = node.disabled;
  for (const [type, fn] of listeners.get(old) ?? []) old.removeEventListener(type, fn);
  const moved = listeners.get(node) ?? [];
  for (const [type, fn] of moved) old.addEventListener(type, fn);
  if (moved.length) listeners.set(old, moved);
  else listeners.delete(old);
  patchChildren(old, [...node.childNodes]);
}

const pad = (n) => String(n).padStart(2, '0');

/** Local time, to the second: `2024-05-01 13:04:05`. */
export function time(ms) {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A duration for people: `45 s`, `14 min`, `3 h 5 min`, `2 d 4 h`. */
export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  const sec = Math.max(0, Math.round(ms / 1000));
  if (sec < 60) return `${sec} s`;
  const min = Math.floor(sec / 60);
  if (min < 60) return `${min} min`;
  const hours = Math.floor(min / 60);
  if (hours < 24) return `${hours} h ${min % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function timeWithAge(ms) {
  if (ms === null || ms === undefined) return '—';
  return h('time', { datetime: new Date(ms).toISOString(), title: `${duration(Date.now() - ms)} ago` }, time(ms));
}

export const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '—');

/** `<dl>` from `[term, value]` pairs. */
export function facts(pairs, className = 'facts') {
  return h(
    'dl',
    { class: className },
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

/**
 * A table with a caption and column headers; `rows` are arrays of cells (nodes or text). `keys`, one per row, tell a
 * live redraw which row is which (see {@link morph}).
 */
export function table(caption, headers, rows, empty = 'Nothing here.', keys = []) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells, i) =>
          h(
            'tr',
            { 'data-key': keys[i] },
            cells.map((cell) => h('td', {}, cell)),
          ),
        ),
      ),
    ),
  );
}

/** A status as a badge whose class colours it. */
export function badge(status) {
  return h('span', { class: `badge badge-${status}` }, status);
}

/** An API error as a visible alert: what failed, the code, and each invalid field. */
export function errorBox(error, what = 'The request failed') {
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('strong', {}, `${what}: `),
    error.message,
    error.code ? h('span', { class: 'code' }, ` (${error.status ? `${error.status} ` : ''}${error.code})`) : null,
    error.issues?.length
      ? h(
          'ul',
          {},
          error.issues.map((i) => h('li', {}, `${i.path || 'request'}: ${i.message}`)),
        )
      : null,
  );
}

/** Local `datetime-local` value -> ISO 8601, or '' when empty. */
export function toIso(local) {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? local : d.toISOString();
}

/** ISO 8601 (or epoch ms) -> `datetime-local` value. */
export function toLocalInput(value) {
  if (!value) return '';
  const d = new Date(/^\d+$/.test(value) ? Number(value) : value);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
