/**
 * A level-triggered wake-up: `fire()` before `wait()` is not lost, and many fires coalesce into one.
 */
export class Signal {
  private fired = false;
  private waiter: (() => void) | undefined;

  fire(): void {
    this.fired = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** Resolves on the next fire (or a pending one), or after `timeoutMs`. */
  wait(timeoutMs: number): Promise<void> {
    if (this.fired) {
      this.fired = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.waiter === done) this.waiter = undefined;
        this.fired = false;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiter = done;
    });
  }

  /** Resolves true on a fire (consuming it), or false once `until` settles first (nothing consumed). */
  race(until: Promise<unknown>): Promise<boolean> {
    if (this.fired) {
      this.fired = false;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const done = () => {
        if (this.waiter === done) this.waiter = undefined;
        this.fired = false;
        resolve(true);
      };
      const lost = () => {
        if (this.waiter !== done) return;
        this.waiter = undefined;
        resolve(false);
      };
      this.waiter = done;
      until.then(lost, lost);
    });
  }
}
