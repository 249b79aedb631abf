/**
 * Spaces batches so that any one-second window holds at most `ratePerSecond` rows plus one batch:
 * each batch starts at least `rows / ratePerSecond` seconds after the previous one actually
 * started. Unlike a token bucket it keeps no credit, so after a stall (a slow database, a late
 * timer) the next batch waits its full interval instead of bursting to catch up.
 */
export class RowPacer {
  private nextAt = -Infinity;
  private previousAt = -Infinity;

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
    this.previousAt = this.nextAt;
    this.nextAt = this.now() + this.interval(rows);
  }

  /** Takes back the last `started`: that batch rolled back and acted on no row. */
  undo(): void {
    this.nextAt = this.previousAt;
  }

  /** No batch before `ms` from now, e.g. when another runner's batch may have started just before. */
  holdFor(ms: number): void {
    this.nextAt = Math.max(this.nextAt, this.now() + ms);
  }

  /** How long a batch of `rows` must be followed by no other, in milliseconds. */
  interval(rows: number): number {
    return (rows / this.ratePerSecond) * 1000;
  }
}
