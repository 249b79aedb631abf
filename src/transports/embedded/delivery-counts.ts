/**
 * How many times this process has delivered each uncommitted offset, per (group, topic): the
 * source of `Delivery.redeliveries`. Entries are dropped once the offset is committed.
 */
export class DeliveryCounts {
  private readonly byStream = new Map<string, Map<number, number>>();

  /** Records one more delivery of `offset`; returns how many deliveries came before it. */
  next(group: string, topic: string, offset: number): number {
    const key = streamKey(group, topic);
    let counts = this.byStream.get(key);
    if (!counts) {
      counts = new Map();
      this.byStream.set(key, counts);
    }
    const before = counts.get(offset) ?? 0;
    counts.set(offset, before + 1);
    return before;
  }

  /** Forgets offsets up to and including `committed`. */
  forgetThrough(group: string, topic: string, committed: number): void {
    const key = streamKey(group, topic);
    const counts = this.byStream.get(key);
    if (!counts) return;
    // Small: at most the offsets handed out and not yet committed.
    for (const offset of counts.keys()) if (offset <= committed) counts.delete(offset);
    if (counts.size === 0) this.byStream.delete(key);
  }
}

function streamKey(group: string, topic: string): string {
  return `${group}\u0000${topic}`;
}
