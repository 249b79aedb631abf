import { errorBox, fill, h, morph } from './dom.js';

/**
 * A part of a page that reloads on every refresh. It redraws only when the data changed, and then in place (see
 * `morph`), so focus, a text selection, scroll and opened details survive wherever the content stayed the same; a
 * failed load shows the error above the last good data.
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
        morph(body, render(data));
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
