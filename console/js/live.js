import { errorBox, fill, h } from './dom.js';

/**
 * A part of a page that reloads on every refresh. It redraws only when the data changed, so a refresh that brings
 * nothing new leaves focus, selection and scroll alone; a failed load shows the error above the last good data.
 *
 * @param {string} label             what is loading, for the error text ("Dead letters")
 * @param {() => Promise<unknown>} load
 * @param {(data: any) => unknown} render  returns nodes
 */
export function liveSection(label, load, render) {
  const problem = h('div', { class: 'live-problem' });
  const body = h('div', { class: 'live-body', 'aria-busy': 'true' }, h('p', { class: 'loading' }, 'Loading…'));
  const el = h('section', { class: 'live' }, problem, body);
  let last;
  return {
    el,
    /** Forgets the last data, so the next refresh redraws even if nothing changed. */
    invalidate() {
      last = undefined;
    },
    async refresh() {
      try {
        const data = await load();
        problem.replaceChildren();
        const key = JSON.stringify(data);
        if (key === last) return data;
        last = key;
        // Keep open what the reader opened (a payload, a body) across the redraw.
        const open = [...body.querySelectorAll('details')].map((d) => d.open);
        fill(body, render(data));
        body.querySelectorAll('details').forEach((d, i) => (d.open = open[i] ?? d.open));
        body.setAttribute('aria-busy', 'false');
        return data;
      } catch (error) {
        fill(problem, errorBox(error, `${label} could not be loaded`));
        if (last === undefined) {
          body.replaceChildren();
          body.setAttribute('aria-busy', 'false');
        }
        return undefined;
      }
    },
  };
}
