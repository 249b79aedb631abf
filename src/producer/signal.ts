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
  async wait(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await this.race(new Promise((r) => (timer = setTimeout(r, timeoutMs))));
    clearTimeout(timer);
  }

  /** Resolves true on a fire (consuming it), or false once `until` settles first (nothing consumed). */
  race(until: Promise<unknown>): Promise<boolean> {
    if (this.fired) {
      this.fired = false;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      // Called only by fire(), which has already taken it off.
      const done = () => {
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
