/**
 * Requests made in one event-loop turn share one flush (a checkpoint write, an offset commit): the
 * first request schedules it for the next turn, and every request waiting resolves once it has ended,
 * whatever its outcome (the flush reports its own failures). `releaseAll` resolves the waiting
 * requests without a flush, for a subscription that closed after flushing itself.
 */
export class TurnFlush {
  private waiters: (() => void)[] = [];

  constructor(private readonly flush: () => void | Promise<void>) {}

  request(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      if (this.waiters.length > 1) return;
      setImmediate(() => {
        void (async () => this.flush())()
          .catch(() => undefined)
          .finally(() => this.releaseAll());
      });
    });
  }

  releaseAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
