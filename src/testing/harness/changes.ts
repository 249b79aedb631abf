/**
 * "Something happened" in the pipeline: a store call of the relay, a consumer or a replay job
 * returned, a publish settled, a delivery was handled or acked, the clock moved. settled() looks at
 * the state again on each, instead of polling it.
 */
export class Changes {
  private readonly listeners = new Set<() => void>();

  notify = (): void => {
    for (const listener of this.listeners) listener();
  };

  on(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
