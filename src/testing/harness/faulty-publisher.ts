import { decodeEnvelope } from '../../core/wire.js';
import { PublishError } from '../../core/errors.js';
import type { Envelope } from '../../core/envelope.js';
import type { Clock } from '../../core/clock.js';
import type { OutgoingMessage, Publisher } from '../../ports/transport.js';

/** A publish the broker confirmed, as {@link TestHarness.published} lists it. */
export interface PublishedMessage<P = unknown> {
  readonly topic: string;
  readonly envelope: Envelope<P>;
  /** The harness clock's time of the confirm. */
  readonly confirmedAt: number;
}

/**
 * The relay's publisher: the embedded log's, with the faults a test injects in front of it, and a
 * record of every confirm. Publishes in flight are counted for settled().
 */
export class FaultyPublisher implements Publisher {
  readonly confirmed: PublishedMessage[] = [];
  private failures: Error[] = [];
  private dropped = false;
  private inFlightCount = 0;
  private readonly readyWaiters = new Set<(ready: boolean) => void>();

  constructor(
    private readonly inner: Publisher,
    private readonly clock: Clock,
    private readonly changed: () => void,
  ) {}

  get inFlight(): number {
    return this.inFlightCount;
  }

  get connectionDropped(): boolean {
    return this.dropped;
  }

  /** The next `n` publishes reject with `error`. */
  failNext(n: number, error: Error): void {
    for (let i = 0; i < n; i++) this.failures.push(error);
  }

  drop(): void {
    this.dropped = true;
  }

  restore(): void {
    if (!this.dropped) return;
    this.dropped = false;
    for (const waiter of [...this.readyWaiters]) waiter(this.inner.isReady());
    this.changed();
  }

  async publish(out: OutgoingMessage): Promise<void> {
    this.inFlightCount++;
    try {
      if (this.dropped)
        throw new PublishError('SURETY_CONNECTION_LOST', 'the connection to the broker was dropped (injected fault)');
      const injected = this.failures.shift();
      if (injected) throw injected;
      await this.inner.publish(out);
      this.confirmed.push({ topic: out.topic, envelope: decodeEnvelope(out.message), confirmedAt: this.clock.now() });
    } finally {
      this.inFlightCount--;
      this.changed();
    }
  }

  isReady(): boolean {
    return !this.dropped && this.inner.isReady();
  }

  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (!this.dropped) return this.inner.waitUntilReady(timeoutMs);
    return new Promise<boolean>((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.readyWaiters.delete(done);
        resolve(ready);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.readyWaiters.add(done);
    });
  }

  /** Ends every wait for readiness at once (false): nothing waits on a closed harness. */
  async close(): Promise<void> {
    for (const waiter of [...this.readyWaiters]) waiter(false);
    await this.inner.close();
  }
}
