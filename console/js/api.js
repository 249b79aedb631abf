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

/**
 * Sends one request. `query` entries that are empty are left out; `body` is sent as JSON. Every request that changes
 * something carries the CSRF token the session handed out.
 */
export async function api(method, path, { query, body } = {}) {
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
