// What every view may ask of the page around it: show a notice, refresh now.

let hideTimer;
let refresher = () => {};

/** A short message in the page's status region (announced by screen readers). */
export function notify(text, kind = 'ok') {
  const el = document.getElementById('notice');
  el.textContent = text;
  el.className = `notice notice-${kind}`;
  el.hidden = false;
  clearTimeout(hideTimer);
  hideTimer = setTimeout(() => (el.hidden = true), kind === 'ok' ? 8_000 : 20_000);
}

export function clearNotice() {
  clearTimeout(hideTimer);
  document.getElementById('notice').hidden = true;
}

/** Refreshes the current view at once, e.g. after an action. */
export function refreshNow() {
  refresher();
}

export function setRefresher(fn) {
  refresher = fn;
}
