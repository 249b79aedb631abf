/**
 * Spaces batches so that any one-second window holds at most `ratePerSecond` rows plus one batch:
 * each batch starts at least `rows / ratePerSecond` seconds after the previous one actually
 * started. Unlike a token bucket it keeps no credit, so after a stall (a slow database, a late
 * timer) the next batch waits its full interval instead of bursting to catch up.
 */
export class RowPacer {
  private nextAt = -Infinity;

  constructor(
    private readonly ratePerSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Milliseconds until the next batch may start (0 when it may start now). */
  delay(): number {
    return Math.max(0, this.nextAt - this.now());
  }

  /** Call as a batch of `rows` starts. */
  started(rows: number): void {
    this.nextAt = this.now() + (rows / this.ratePerSecond) * 1000;
  }
}
