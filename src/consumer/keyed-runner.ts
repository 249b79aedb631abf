/**
 * Runs tasks at most `limit` at a time; tasks given the same key run one after another, in the order
 * added, and a task waiting for its key holds no slot. After the first failure nothing new starts.
 * `drain` waits until every task has settled (so none still uses the transaction).
 */
export class KeyedRunner {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly tails = new Map<string, Promise<void>>();
  private readonly failures: unknown[] = [];

  constructor(private readonly limit: number) {}

  add(key: string | undefined, task: () => Promise<void>): void {
    const before = key === undefined ? undefined : this.tails.get(key);
    const run = (async () => {
      if (before) await before; // settles, never rejects
      await this.acquire();
      try {
        if (this.failures.length === 0) await task();
      } catch (err) {
        this.failures.push(err);
      } finally {
        this.release();
      }
    })();
    this.pending.add(run);
    if (key !== undefined) this.tails.set(key, run);
    void run.then(() => {
      this.pending.delete(run);
      if (key !== undefined && this.tails.get(key) === run) this.tails.delete(key);
    });
  }

  /** Waits for every task added so far; returns the failures, in the order they happened. */
  async drain(): Promise<readonly unknown[]> {
    while (this.pending.size > 0) await Promise.all(this.pending);
    return this.failures;
  }

  private async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
