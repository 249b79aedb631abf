/**
 * "Something happened" in the pipeline: a store call of the relay, a consumer or a replay job
 * returned, a publish settled, a delivery was handled or acked, the clock moved. settled() looks at
 * the state again on each, instead of polling it.
 */
export class Changes {
  private readonly listeners = new Set<(what: string) => void>();

  /** `what` names the store call that returned (`outbox.claim`), when it was one. */
  notify = (what = ''): void => {
    for (const listener of this.listeners) listener(what);
  };

  on(listener: (what: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves on the next change `accept` accepts. */
  next(accept: (what: string) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const off = this.on((what) => {
        if (!accept(what)) return;
        off();
        resolve();
      });
    });
  }
}
