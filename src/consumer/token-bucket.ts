/** Rate limit: at most `ratePerSecond` tokens per second on average, bursts up to one second's worth. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly now: () => number,
  ) {
    this.tokens = Math.min(ratePerSecond, 1);
    this.last = now();
  }

  /** Waits until `n` tokens are available, then takes them. */
  async take(n: number): Promise<void> {
    for (;;) {
      const t = this.now();
      this.tokens = Math.min(this.ratePerSecond, this.tokens + ((t - this.last) / 1000) * this.ratePerSecond);
      this.last = t;
      if (this.tokens >= n || (n > this.ratePerSecond && this.tokens >= this.ratePerSecond)) {
        this.tokens -= n;
        return;
      }
      const waitMs = Math.ceil(((Math.min(n, this.ratePerSecond) - this.tokens) / this.ratePerSecond) * 1000);
      await new Promise((r) => setTimeout(r, Math.max(1, waitMs)));
    }
  }
}
