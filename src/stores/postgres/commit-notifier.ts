import type { PgQueryable } from './executor.js';

/**
 * NOTIFY after commits, outside any transaction: one at a time, and commits made while one is in
 * flight fold into one more after it, so every commit is followed by a notification. A NOTIFY inside
 * the business transaction would make its commit hold PostgreSQL's cluster-wide notify lock through
 * the WAL flush, serialising every such commit. A NOTIFY that fails is left to the relays' poll.
 */
export class CommitNotifier {
  private inFlight: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly pool: PgQueryable,
    private readonly channel: string,
  ) {}

  signal(): void {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = this.send().finally(() => (this.inFlight = undefined));
  }

  /** Resolves once no NOTIFY is in flight (before the pool closes). */
  async idle(): Promise<void> {
    await this.inFlight;
  }

  private async send(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.pool.query('SELECT pg_notify($1, $2)', [this.channel, '']);
      } while (this.again);
    } catch {
      // Best effort: relays elsewhere still find the rows at their next poll.
    }
  }
}
