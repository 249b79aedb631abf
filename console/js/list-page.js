import { get } from './api.js';
import { h, table, toIso, toLocalInput } from './dom.js';
import { liveSection } from './live.js';
import { isMultiStore, storeOf, storeParam } from './stores.js';

// The `before` values of the pages above the current one, per list, so "Newer" can go back up.
const pageStacks = new Map();

/**
 * A filtered, keyset-paged list. The applied filter and page live in the address (`#/dead-letters?status=dead`), so a
 * reload or a shared link shows the same rows; what the user types is only applied on submit, and live refreshes
 * redraw only the rows, never the form.
 *
 * @param {object} o
 * @param {string} o.route      hash route and API path, e.g. `dead-letters`
 * @param {string} o.heading
 * @param {URLSearchParams} o.query  the current address's query
 * @param {Array<{name: string, label: string, kind?: 'text'|'statuses'|'time'|'select', options?: string[]}>} o.fields
 * @param {string[]} o.columns
 * @param {(item: any, store: string) => unknown[]} o.row
 * @param {(filter: Record<string, string>, store: string) => unknown} [o.tools]  extra controls under the form (bulk actions)
 *
 * With several stores the list shows one of them: the address's `store` (kept across filtering and paging), which
 * every request of the list names.
 */
export function listPage({ route, apiPath = route, heading, query, fields, columns, row, tools, intro }) {
  const applied = {};
  for (const f of fields) {
    const value = query.get(f.name);
    if (value) applied[f.name] = value;
  }
  const limit = query.get('limit') ?? '50';
  const before = query.get('before') ?? '';
  const store = storeOf(query, `/${route}`);
  const stackKey = `${route} ${store}`;
  const stack = pageStacks.get(stackKey) ?? [];
  pageStacks.set(stackKey, stack);

  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': `Filter ${heading.toLowerCase()}` },
    fields.map((f) => field(f, applied[f.name] ?? '')),
    h(
      'div',
      { class: 'field' },
      h('label', { for: `f-limit` }, 'Per page'),
      h(
        'select',
        { id: 'f-limit', name: 'limit' },
        ['20', '50', '100', '200', '500'].map((n) => h('option', { value: n, selected: n === limit }, n)),
      ),
    ),
    h(
      'div',
      { class: 'filter-buttons' },
      h('button', { type: 'submit', class: 'primary' }, 'Apply filters'),
      h('button', { type: 'button', onclick: () => go({}) }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = {};
    for (const f of fields) {
      const value = readField(form, f);
      if (value) next[f.name] = value;
    }
    stack.length = 0;
    go(next, form.elements.limit.value);
  });

  function go(filter, nextLimit = limit, nextBefore = '') {
    const params = new URLSearchParams(filter);
    if (isMultiStore()) params.set('store', store);
    if (nextLimit !== '50') params.set('limit', nextLimit);
    if (nextBefore !== '') params.set('before', String(nextBefore));
    const qs = params.toString();
    if (!nextBefore && Object.keys(filter).length === 0) stack.length = 0;
    location.hash = `#/${route}${qs ? `?${qs}` : ''}`;
  }

  const list = liveSection(
    heading,
    () => get(apiPath, { ...applied, limit, before, store: storeParam(store) }),
    (page) => [
      table(
        `${heading}${isMultiStore() ? ` in store ${page.store ?? store}` : ''}: ${page.items.length} shown${before ? ' (older page)' : ''}`,
        columns,
        page.items.map((item) => row(item, store)),
        Object.keys(applied).length ? 'No rows match these filters.' : 'Nothing here yet.',
        page.items.map((item) => String(item.id ?? item.seq ?? item.messageId)),
      ),
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Pages' },
        h(
          'button',
          { type: 'button', disabled: !before, onclick: () => go(applied, limit, stack.pop() ?? '') },
          'Newer',
        ),
        h(
          'button',
          {
            type: 'button',
            disabled: page.nextBefore === null || page.nextBefore === undefined,
            onclick: () => {
              stack.push(before);
              go(applied, limit, page.nextBefore);
            },
          },
          'Older',
        ),
      ),
    ],
  );

  return {
    title: heading,
    nodes: [
      h('h1', {}, heading),
      intro ? h('p', { class: 'intro' }, intro) : null,
      form,
      tools ? tools(applied, store) : null,
      list.el,
    ],
    refresh: () => list.refresh(),
  };
}

function field(f, value) {
  const id = `f-${f.name}`;
  if (f.kind === 'statuses') {
    const chosen = new Set(value ? value.split(',') : []);
    return h(
      'fieldset',
      { class: 'field statuses' },
      h('legend', {}, f.label),
      f.options.map((status) =>
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', name: f.name, value: status, checked: chosen.has(status) }),
          ` ${status}`,
        ),
      ),
    );
  }
  if (f.kind === 'select') {
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id }, f.label),
      h(
        'select',
        { id, name: f.name },
        h('option', { value: '' }, 'any'),
        f.options.map((o) => h('option', { value: o, selected: o === value }, o)),
      ),
    );
  }
  const input =
    f.kind === 'time'
      ? h('input', { id, name: f.name, type: 'datetime-local', value: toLocalInput(value) })
      : h('input', { id, name: f.name, type: 'search', value, autocomplete: 'off', spellcheck: 'false' });
  return h('div', { class: 'field' }, h('label', { for: id }, f.label), input);
}

function readField(form, f) {
  if (f.kind === 'statuses') {
    return [...form.querySelectorAll(`input[name="${f.name}"]:checked`)].map((i) => i.value).join(',');
  }
  const value = form.elements[f.name].value.trim();
  return f.kind === 'time' ? toIso(value) : value;
}
