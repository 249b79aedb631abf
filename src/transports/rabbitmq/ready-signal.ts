/** A boolean that callers can wait on, with a deadline. */
export class ReadySignal {
  private value = false;
  private readonly waiters = new Set<() => void>();

  get isSet(): boolean {
    return this.value;
  }

  set(value: boolean): void {
    this.value = value;
    if (!value) return;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  /** True once set, false if `timeoutMs` passes first. */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.value) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          this.waiters.delete(wake);
          resolve(this.value);
        },
        Math.max(0, timeoutMs),
      );
      this.waiters.add(wake);
    });
  }
}
