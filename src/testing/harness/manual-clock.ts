import type { Clock } from '../../core/clock.js';

/**
 * The harness's clock: time stands still until the test moves it. The relay's backoff, the
 * consumers' retry schedule and the replay job read it, so a test steps through a schedule of hours
 * in milliseconds of real time.
 * @example
 * harness.clock.advance(60_000); // the first dead-letter retry is due
 * await harness.settled();
 */
export class ManualClock implements Clock {
  private t: number;
  private readonly listeners = new Set<() => void>();

  constructor(start: number) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** Moves time forward by `ms` and wakes what waits for it (the relay, settled()). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`clock.advance(ms): ms must be a finite number >= 0, got ${ms}`);
    this.t += ms;
    for (const listener of this.listeners) listener();
  }

  /** @internal */
  onAdvance(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
