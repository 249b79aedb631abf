import type { Clock } from '../core/clock.js';

export interface SharedReadOptions<T> {
  /** How long an answer (or a failure) is reused, from when its read started; 0 only shares reads in flight. */
  readonly ttlMs: number;
  readonly clock: Clock;
  /** The time an answer describes, when older than its read (an answer merged from cached parts). */
  readonly asOf?: (value: T) => number;
}

interface Entry<T> {
  at: number;
  settled: boolean;
  readonly answer: Promise<T>;
}

/**
 * A read shared by every caller that asks while it runs, and its answer reused until `ttlMs` has
 * passed by the clock: a burst of console tabs costs the database one read. A failure is reused
 * too, so a struggling database is not asked again at once.
 * @example
 * const overview = new SharedRead(() => store.admin.overview(Date.now()), { ttlMs: 2_000, clock: systemClock });
 * const [a, b] = await Promise.all([overview.get(), overview.get()]); // one read
 */
export class SharedRead<T> {
  private last: Entry<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly options: SharedReadOptions<T>,
  ) {}

  get(): Promise<T> {
    return this.current().answer;
  }

  /** The answer with the time its read started (what it is at most as old as). */
  stamped(): { readonly at: number; readonly answer: Promise<T> } {
    const { at, answer } = this.current();
    return { at, answer };
  }

  private current(): Entry<T> {
    const now = this.options.clock.now();
    const last = this.last;
    if (last && (!last.settled || now - last.at < this.options.ttlMs)) return last;
    const entry: Entry<T> = {
      at: now,
      settled: false,
      answer: (async () => this.read())().then(
        (value) => {
          entry.settled = true;
          if (this.options.asOf) entry.at = Math.min(entry.at, this.options.asOf(value));
          return value;
        },
        (err: unknown) => {
          entry.settled = true;
          throw err;
        },
      ),
    };
    this.last = entry;
    return entry;
  }
}
