/**
 * A subscription's position on one topic while it holds that topic's lease. Rows are read in
 * offset order; the checkpoint may only move up to just before the lowest offset read and not yet
 * acked, so that a crash redelivers everything not committed and nothing that was.
 */
export class TopicCursor {
  private readPosition: number;
  private committed: number;
  /** Offsets read and not yet acked. Inserted in ascending order, so the first is the lowest. */
  private readonly unacked = new Set<number>();
  private retired = false;

  constructor(
    readonly topic: string,
    committedOffset: number,
  ) {
    this.readPosition = committedOffset;
    this.committed = committedOffset;
  }

  /** False once the lease is lost or the subscription closed: its deliveries settle nothing. */
  get active(): boolean {
    return !this.retired;
  }

  /** Highest offset read so far; the next read starts after it. */
  get position(): number {
    return this.readPosition;
  }

  get committedOffset(): number {
    return this.committed;
  }

  markRead(offset: number): void {
    this.unacked.add(offset);
    this.readPosition = offset;
  }

  markAcked(offset: number): void {
    this.unacked.delete(offset);
  }

  /** The offset the checkpoint can move to now, or undefined when it cannot advance. */
  commitCandidate(): number | undefined {
    const lowestUnacked = this.unacked.values().next();
    const candidate = lowestUnacked.done ? this.readPosition : lowestUnacked.value - 1;
    return candidate > this.committed ? candidate : undefined;
  }

  markCommitted(offset: number): void {
    if (offset > this.committed) this.committed = offset;
  }

  retire(): void {
    this.retired = true;
  }
}
