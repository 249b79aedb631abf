/**
 * In-process wake-up: when a publish commits, subscribers of the same log in this process are told
 * at once instead of waiting for their next poll. Other processes' appends are found by polling.
 */
type CommitListener = (topics: ReadonlySet<string>) => void;

const listenersByLog = new Map<string, Set<CommitListener>>();

/** Registers `listener` for commits to the log named `logKey`; returns the unregister function. */
export function onCommit(logKey: string, listener: CommitListener): () => void {
  let listeners = listenersByLog.get(logKey);
  if (!listeners) {
    listeners = new Set();
    listenersByLog.set(logKey, listeners);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && listenersByLog.get(logKey) === listeners) listenersByLog.delete(logKey);
  };
}

export function signalCommit(logKey: string, topics: ReadonlySet<string>): void {
  const listeners = listenersByLog.get(logKey);
  if (!listeners) return;
  for (const listener of [...listeners]) listener(topics);
}
