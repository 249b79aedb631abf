import { AsyncResource } from 'node:async_hooks';
import { SuretyError } from '../../core/errors.js';
import type { Changes } from './changes.js';

/** settled() ran out of time; the message lists what was still outstanding. */
export class NotSettledError extends SuretyError {
  constructor(
    readonly outstanding: readonly string[],
    deadlineMs: number,
  ) {
    super(
      'SURETY_NOT_SETTLED',
      `the pipeline did not settle within ${deadlineMs} ms; still outstanding:\n  - ${outstanding.join('\n  - ')}`,
    );
  }
}

/**
 * Resolves once `check` finds nothing outstanding. It runs at once and again after every change
 * (one run at a time; changes during a run ask for one more), never on a timer; at the deadline it
 * rejects with what the last look found.
 */
export function settleWait(
  changes: Changes,
  check: () => Promise<string[]>,
  deadlineMs: number,
  register: (abort: (err: Error) => void) => () => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let running = false;
    let again = false;
    let ended = false;
    let last: string[] = ['(not looked at yet)'];
    const end = (err?: Error) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      off();
      unregister();
      if (err) reject(err);
      else resolve();
    };
    // Bound to the caller's async context: a change reported from inside a store transaction must not
    // make the look part of it (SQLite's store refuses a call from within its own transaction).
    const look = AsyncResource.bind(async () => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          last = await check();
          if (last.length === 0) return end();
        } while (again && !ended);
      } catch (err) {
        end(err instanceof Error ? err : new Error(String(err)));
      } finally {
        running = false;
      }
    });
    const timer = setTimeout(() => end(new NotSettledError(last, deadlineMs)), deadlineMs);
    const off = changes.on(() => void look());
    const unregister = register(end);
    void look();
  });
}
