/**
 * A counting semaphore for admin reads on one store: at most `max` run at once, the rest wait in
 * arrival order. The store's connection pool is shared with the relay and the consumers, so a burst
 * of console tabs must not take all of it.
 * @example
 * const limit = new ReadLimit(2);
 * const page = await limit.run(() => service.listDeadLetters(filter, page));
 */
export class ReadLimit {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('a read limit needs max >= 1');
  }

  /** Reads running now. */
  get running(): number {
    return this.active;
  }

  /** Reads waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active < this.max) this.active++;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next reader, so a newcomer cannot overtake the queue.
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}
