import type { PendingPublish } from './confirm-tracker.js';

/**
 * The publishes awaiting the broker's verdict, kept in deadline order, and the one timer that
 * times them out: only the first deadline matters. A publish written again gets a fresh deadline,
 * the latest of all, and so moves to the end.
 */
export class UnsettledPublishes {
  private readonly all = new Set<PendingPublish>();
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly timeoutMs: number,
    /** Called for each publish whose deadline has passed; it must settle (and so remove) it. */
    private readonly expired: (p: PendingPublish) => void,
  ) {}

  get size(): number {
    return this.all.size;
  }

  /** A snapshot, in deadline order. */
  list(): PendingPublish[] {
    return [...this.all];
  }

  add(p: PendingPublish): void {
    this.all.add(p);
    this.timer ??= this.arm(p.deadline);
  }

  /** A fresh deadline from now. */
  renew(p: PendingPublish): void {
    p.deadline = Date.now() + this.timeoutMs;
    this.all.delete(p);
    this.all.add(p);
  }

  delete(p: PendingPublish): void {
    this.all.delete(p);
    if (this.all.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const wake of this.idleWaiters) wake();
    this.idleWaiters = [];
  }

  /** Resolves once none is left, or after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.all.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private arm(deadline: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.expire(), Math.max(0, deadline - Date.now()));
    timer.unref();
    return timer;
  }

  private expire(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const p of this.all) {
      if (p.deadline > now) {
        this.timer = this.arm(p.deadline);
        return;
      }
      this.expired(p);
    }
  }
}
