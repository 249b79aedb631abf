import type { Delivery } from '../../ports/transport.js';

/** What a test's handler does with a delivery after recording it. */
export type Behaviour = (delivery: Delivery, log: DeliveryLog) => Promise<void>;

const DEFAULT_WAIT_MS = 20_000;

/** Records deliveries and lets a test await a condition on them (event-driven, with a deadline). */
export class DeliveryLog {
  readonly deliveries: Delivery[] = [];
  /** Deliveries per message id, so that predicates over thousands of messages stay cheap. */
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Set<() => void>();

  /** What the handler does after recording; acks by default. Tests may swap it. */
  constructor(public behaviour: Behaviour = (d) => d.ack()) {}

  readonly handler = async (delivery: Delivery): Promise<void> => {
    this.deliveries.push(delivery);
    this.counts.set(delivery.message.id, this.countOf(delivery.message.id) + 1);
    for (const check of [...this.waiters]) check();
    await this.behaviour(delivery, this);
  };

  ids(): string[] {
    return this.deliveries.map((d) => d.message.id);
  }

  /** Distinct ids, in the order of their first delivery. */
  uniqueIds(): Set<string> {
    return new Set(this.counts.keys());
  }

  countOf(id: string): number {
    return this.counts.get(id) ?? 0;
  }

  /** Resolves once `predicate` holds; rejects naming `what` after `timeoutMs`. */
  until(what: string, predicate: (log: DeliveryLog) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const check = (): void => {
        if (!predicate(this)) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what} (${this.deliveries.length} deliveries so far)`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }
}

/** A handler that records and settles nothing (the delivery stays unsettled). */
export const hold: Behaviour = async () => {};
