// Entry point: session, hash routing and the live refresh of the view on screen.
import { currentSession, loadSession, onSessionChange, signIn, signOut } from './api.js';
import { errorBox, fill, h } from './dom.js';
import { clearNotice, notify, setRefresher } from './shell.js';
import { choose, chosenStore, isMultiStore, loadStores, storeList, storeOf } from './stores.js';
import { auditView } from './views/audit.js';
import { deadLettersView } from './views/dead-letters.js';
import { jobsView } from './views/jobs.js';
import { deadLetterRedirectView, messageView } from './views/message.js';
import { outboxView } from './views/outbox.js';
import { overviewView } from './views/overview.js';

const REFRESH_MS = 2_000;

const routes = [
  [/^\/overview$/, overviewView],
  [/^\/outbox$/, outboxView],
  [/^\/dead-letters$/, deadLettersView],
  [/^\/dead-letters\/(\d+)$/, deadLetterRedirectView],
  [/^\/messages\/([^/]+)$/, messageView],
  [/^\/audit$/, auditView],
  [/^\/jobs$/, jobsView],
];

// Views that show one store at a time; the overview and a message's page merge every store.
const PER_STORE = new Set(['/outbox', '/dead-letters', '/audit', '/jobs']);

let current = null;
let inFlight = null;
let again = false;

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/overview';
  const at = raw.indexOf('?');
  return at < 0
    ? { path: raw, query: new URLSearchParams() }
    : { path: raw.slice(0, at), query: new URLSearchParams(raw.slice(at + 1)) };
}

function show({ focus = false } = {}) {
  const main = document.getElementById('view');
  const session = currentSession();
  document.getElementById('nav').hidden = !session;
  document.getElementById('who').hidden = !session;
  if (!session) {
    current = null;
    showSignIn(main);
    return;
  }
  document.getElementById('who-name').textContent = `${session.actor} (${session.role})`;
  const { path, query } = parseHash();
  if (PER_STORE.has(path) && query.get('store')) choose(query.get('store'));
  showStorePicker(path, query);
  current = null;
  for (const [pattern, make] of routes) {
    const match = pattern.exec(path);
    const params = match && decodeAll(match.slice(1));
    if (params) {
      current = make({ params, query });
      break;
    }
  }
  current ??= {
    title: 'Not found',
    nodes: [h('h1', {}, 'Not found'), h('p', {}, 'No page here. '), h('a', { href: '#/overview' }, 'Overview')],
  };
  document.title = `${current.title} · Surety console`;
  for (const link of document.querySelectorAll('#nav a')) {
    const route = link.getAttribute('href').replace(/^#|\?.*$/g, '');
    // A list link keeps the store the reader chose; without a choice each list opens where its rows are.
    link.setAttribute(
      'href',
      PER_STORE.has(route) && isMultiStore() && chosenStore() ? `#${route}?store=${chosenStore()}` : `#${route}`,
    );
    if (path.startsWith(route)) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  fill(main, current.nodes);
  if (focus) main.focus();
  void refresh();
}

/** Decoded path parameters, or null when one is not valid %-encoding (a mangled link: the page is not found). */
function decodeAll(params) {
  try {
    return params.map(decodeURIComponent);
  } catch {
    return null;
  }
}

/**
 * The header's store selector: shown only when the server reads several databases. On a list it switches the
 * list's store (the address keeps it); the overview and a message's page show every store, so there it rests.
 */
function showStorePicker(path, query) {
  const picker = document.getElementById('store-picker');
  const select = document.getElementById('store');
  picker.hidden = !isMultiStore();
  if (picker.hidden) return;
  const perStore = PER_STORE.has(path);
  const selected = perStore ? storeOf(query, path) : '';
  fill(
    select,
    perStore ? null : h('option', { value: '' }, 'All stores'),
    storeList().map((st) =>
      h(
        'option',
        { value: st.name, selected: st.name === selected },
        st.dialect ? `${st.name} (${st.dialect})` : st.name,
      ),
    ),
  );
  select.value = selected;
  select.disabled = !perStore;
  select.title = perStore ? 'Which database this list shows' : 'This page shows every store';
}

function onStoreChosen(event) {
  const { path, query } = parseHash();
  if (!PER_STORE.has(path) || !event.target.value) return;
  choose(event.target.value);
  query.set('store', event.target.value);
  // Another store's rows: its own pages.
  query.delete('before');
  location.hash = `#${path}?${query}`;
}

/** Refreshes the current view; a request made while one runs is served right after it. */
function refresh() {
  if (inFlight) {
    again = true;
    return inFlight;
  }
  const view = current;
  if (!view?.refresh) return Promise.resolve();
  inFlight = view
    .refresh()
    .catch((error) => notify(`Refresh failed: ${error.message}`, 'error'))
    .finally(() => {
      inFlight = null;
      if (again) {
        again = false;
        void refresh();
      }
    });
  return inFlight;
}

function showSignIn(main) {
  document.title = 'Sign in · Surety console';
  const token = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
  });
  const problem = h('div');
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h(
      'p',
      {},
      'Paste an API token. A viewer token can look; an operator token can also replay, ignore and resend. The token is exchanged for a session cookie and not kept by the page.',
    ),
    h('label', { for: 'token' }, 'API token'),
    token,
    problem,
    button,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    problem.replaceChildren();
    if (!token.value.trim()) {
      problem.append(h('p', { role: 'alert', class: 'error' }, 'Paste a token first.'));
      return;
    }
    button.disabled = true;
    try {
      await signIn(token.value.trim());
      clearNotice();
    } catch (error) {
      problem.append(errorBox(error, 'Sign-in failed'));
      button.disabled = false;
    }
  });
  fill(main, form);
  token.focus();
}

async function start() {
  let wasSignedIn = false;
  onSessionChange(async (session) => {
    if (!session && wasSignedIn) notify('You are signed out. Sign in again to continue.', 'warning');
    // A confirmation left open would act with a session that no longer exists.
    if (!session) for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
    wasSignedIn = Boolean(session);
    if (session) {
      await loadStores().catch((error) => notify(`The list of stores could not be loaded: ${error.message}`, 'error'));
    }
    // Signed out meanwhile: the sign-in form is already up.
    if (session && currentSession() !== session) return;
    show({ focus: true });
  });
  document.getElementById('store').addEventListener('change', onStoreChosen);
  document.getElementById('logout').addEventListener('click', () => {
    signOut().catch((error) => notify(`Sign-out failed: ${error.message}`, 'error'));
  });
  window.addEventListener('hashchange', () => {
    if (currentSession()) show({ focus: true });
  });
  setRefresher(() => void refresh());
  setInterval(() => {
    if (!document.hidden && current) void refresh();
  }, REFRESH_MS);
  try {
    await loadSession();
  } catch (error) {
    fill(document.getElementById('view'), errorBox(error, 'The console could not reach the server'));
  }
}

void start();
