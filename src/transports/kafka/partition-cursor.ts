/**
 * A subscription's position in one partition while it is assigned (see the embedded transport's
 * TopicCursor: the same idea). The commit may only move to just past the highest offset below
 * which everything is settled, so a crash or a rebalance redelivers everything not settled and
 * nothing that was. Kafka commits the offset of the next record to read.
 */
export class PartitionCursor {
  /** Offsets handed out and not yet acked, in ascending order (records arrive in offset order). */
  private readonly unacked = new Set<bigint>();
  private readPosition: bigint | undefined;
  private committed: bigint | undefined;
  private retired = false;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  /** False once the partition is revoked or the subscription closed: its deliveries settle nothing. */
  get active(): boolean {
    return !this.retired;
  }

  get unsettled(): number {
    return this.unacked.size;
  }

  /** Whether this record was already read through this cursor (the client refetches after a rejoin). */
  hasRead(offset: bigint): boolean {
    return this.readPosition !== undefined && offset <= this.readPosition;
  }

  markRead(offset: bigint): void {
    this.unacked.add(offset);
    this.readPosition = offset;
  }

  markAcked(offset: bigint): void {
    this.unacked.delete(offset);
  }

  /** The offset to commit now, or undefined when the commit cannot advance. */
  commitCandidate(): bigint | undefined {
    if (this.readPosition === undefined) return undefined;
    const lowest = this.unacked.values().next();
    const candidate = lowest.done ? this.readPosition + 1n : lowest.value;
    return this.committed === undefined || candidate > this.committed ? candidate : undefined;
  }

  markCommitted(offset: bigint): void {
    if (this.committed === undefined || offset > this.committed) this.committed = offset;
  }

  retire(): void {
    this.retired = true;
  }
}
