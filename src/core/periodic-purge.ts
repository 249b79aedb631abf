/**
 * The loop both retention jobs share: a pass every `intervalMs`, never two at once (a slow pass makes
 * the next tick skip), and purges drained in bounded batches that yield between each other, so the
 * claims and handlers on the same pool are never starved. `stop()` ends the current drain after its
 * batch and waits for the pass.
 */
export class PeriodicPurge {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => {
      this.running ??= this.pass()
        .then(() => undefined, this.onError)
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Batches of `batchSize` until one comes back short (or the job stops); returns the rows deleted. */
  async drain(purge: (limit: number) => Promise<number>, batchSize: number): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await purge(batchSize);
      total += n;
      if (n < batchSize || this.stopped) return total;
      await new Promise((r) => setImmediate(r));
    }
  }
}
