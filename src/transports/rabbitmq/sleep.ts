/** A delay that `cancel()` ends early (resolving false), so close() never waits out a backoff. */
export interface CancellableSleep {
  readonly done: Promise<boolean>;
  cancel(): void;
}

export function cancellableSleep(ms: number): CancellableSleep {
  let finish: (completed: boolean) => void = () => {};
  const done = new Promise<boolean>((resolve) => (finish = resolve));
  const timer = setTimeout(() => finish(true), ms);
  return {
    done,
    cancel() {
      clearTimeout(timer);
      finish(false);
    },
  };
}
