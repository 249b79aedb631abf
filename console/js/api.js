// The console's only way to the server. Paths are relative to the page, so the console works wherever the app is mounted.

/** An answer other than 2xx, carrying the API's `{ error: { code, message, issues } }`. */
export class ApiError extends Error {
  constructor(status, code, message, issues = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.issues = issues;
  }
}

/** Who is signed in: `{ actor, role, csrfToken, ... }`, or null. */
let session = null;
const listeners = new Set();

export function currentSession() {
  return session;
}

/** Calls `fn` with the new session (or null) whenever it changes, e.g. after a 401. */
export function onSessionChange(fn) {
  listeners.add(fn);
}

function setSession(next) {
  session = next;
  for (const fn of listeners) fn(next);
}

export function isOperator() {
  return session?.role === 'operator';
}

/** The issue a 403 names when the CSRF token is not the session's: the cookie was replaced, e.g. by a sign-in in another tab. */
const CSRF_ISSUE_PATH = 'header.x-csrf-token';

/**
 * Sends one request. `query` entries that are empty are left out; `body` is sent as JSON. Every request that changes
 * something carries the CSRF token the session handed out; when the server says that token is stale, the session is
 * loaded again once and, if it is still the same person's, the request is sent again with the new token.
 */
export async function api(method, path, { query, body } = {}) {
  try {
    return await send(method, path, { query, body });
  } catch (error) {
    if (!isStaleCsrf(error) || !session) throw error;
    const before = session;
    let fresh;
    try {
      fresh = await send('GET', 'session');
    } catch (reload) {
      if (reload.status === 401) setSession(null); // signed out meanwhile: back to the sign-in form
      throw reload;
    }
    if (fresh?.actor !== before.actor || fresh?.role !== before.role) {
      // Someone else signed in meanwhile: show who, and do not act in their name.
      setSession(fresh);
      throw error;
    }
    session = fresh; // the same person: no need to redraw the page
    return send(method, path, { query, body });
  }
}

function isStaleCsrf(error) {
  return error instanceof ApiError && error.status === 403 && error.issues.some((i) => i?.path === CSRF_ISSUE_PATH);
}

async function send(method, path, { query, body } = {}) {
  const url = new URL(`api/${path}`, document.baseURI);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session?.csrfToken) headers['x-csrf-token'] = session.csrfToken;
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `The server did not answer (${error.message}).`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const e = data?.error;
    const error = new ApiError(
      response.status,
      e?.code ?? `HTTP_${response.status}`,
      e?.message ?? (text.slice(0, 200) || response.statusText || 'request failed'),
      Array.isArray(e?.issues) ? e.issues : [],
    );
    // A session that expired or was revoked: back to the sign-in form (the sign-in request reports its own 401).
    if (response.status === 401 && path !== 'session' && session) setSession(null);
    throw error;
  }
  return data;
}

/** Restores the session from the cookie; null when there is none. */
export async function loadSession() {
  try {
    setSession(await api('GET', 'session'));
  } catch (error) {
    if (error.status !== 401) throw error;
    setSession(null);
  }
  return session;
}

export async function signIn(token) {
  setSession(await api('POST', 'session', { body: { token } }));
  return session;
}

export async function signOut() {
  try {
    await api('DELETE', 'session');
  } finally {
    setSession(null);
  }
}

export const get = (path, query) => api('GET', path, { query });
/** `query` carries e.g. `{ store }`: request bodies never name the store. */
export const post = (path, body, query) => api('POST', path, { body: body ?? {}, query });
