/** What a checkpoint-style subscription does when one of its deliveries is settled. */
export interface DeliverySettler<E> {
  /** Marks the entry done; resolves once the offset or checkpoint that follows is written. */
  ack(entry: E): Promise<void>;
  /** Hands the entry back to the subscription's own queue; later offsets keep flowing. */
  retry(entry: E): void;
}

/**
 * The settling half of a log transport's delivery (embedded log, Kafka): the first ack or retry
 * wins, and settling again is a no-op, so a handler and the consumer may both settle safely.
 */
export abstract class SettleOnce<E> {
  private settledAs: 'ack' | 'retry' | undefined;

  protected constructor(
    protected readonly entry: E,
    private readonly settler: DeliverySettler<E>,
  ) {}

  get settled(): boolean {
    return this.settledAs !== undefined;
  }

  ack(): Promise<void> {
    if (this.settledAs) return Promise.resolve();
    this.settledAs = 'ack';
    return this.settler.ack(this.entry);
  }

  retry(): Promise<void> {
    if (!this.settledAs) {
      this.settledAs = 'retry';
      this.settler.retry(this.entry);
    }
    return Promise.resolve();
  }
}
