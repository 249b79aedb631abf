import type { Store } from '../../ports/store.js';

/**
 * The store as the harness's components see it: its outbox, inbox and dead-letter concerns report
 * each call that settled (a relay claim, a mark-sent, a replay pass's claim or resolve), so that
 * settled() re-checks then. Calls pass through unchanged.
 */
export function observedStore(store: Store, changed: (what: string) => void): Store {
  return Object.freeze({
    dialect: store.dialect,
    outbox: observed(store.outbox, (method) => changed(`outbox.${method}`)),
    inbox: observed(store.inbox, (method) => changed(`inbox.${method}`)),
    deadLetters: observed(store.deadLetters, (method) => changed(`deadLetters.${method}`)),
    versionGuards: store.versionGuards,
    heartbeats: store.heartbeats,
    admin: store.admin,
    transaction: store.transaction.bind(store),
    migrate: store.migrate.bind(store),
    close: store.close.bind(store),
  });
}

/**
 * Wraps each method of `concern` to call `changed` once its promise settles. What a call resolves to
 * with methods of its own (PostgreSQL's locked batch, settled later) is wrapped too.
 */
function observed<T extends object>(concern: T, changed: (method: string) => void): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(concern, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (!wrapped.has(prop)) {
        const method = value as (...args: unknown[]) => unknown;
        wrapped.set(prop, (...args: unknown[]) => {
          const result = method.apply(target, args);
          if (!isPromise(result)) return result;
          return result.then(
            (resolved) => {
              changed(String(prop));
              return isSettleable(resolved) ? observed(resolved, changed) : resolved;
            },
            (err: unknown) => {
              changed(String(prop));
              throw err;
            },
          );
        });
      }
      return wrapped.get(prop);
    },
  });
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | null)?.then === 'function';
}

/** A locked claim: rows whose outcome is written by its own settle() or release(). */
function isSettleable(value: unknown): value is object {
  return typeof (value as { settle?: unknown } | null)?.settle === 'function';
}
