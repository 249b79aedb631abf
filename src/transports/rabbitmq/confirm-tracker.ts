import type { OutgoingMessage } from '../../ports/transport.js';
import { PublishError } from '../../core/errors.js';

/** One publish awaiting the broker's verdict. */
export interface PendingPublish {
  readonly out: OutgoingMessage;
  /** Epoch ms after which the publish rejects with SURETY_PUBLISH_TIMEOUT. */
  readonly deadline: number;
  /** Set once written; see {@link returnKey}. */
  returnKey: string;
  /** The broker returned it (unroutable); its ack must not count as success. */
  returned: boolean;
  settled: boolean;
  readonly resolve: () => void;
  readonly reject: (err: PublishError) => void;
}

export type Settle = (pending: PendingPublish, err?: PublishError) => void;

/** Identifies a publish for return matching: where it went, and its message id. */
export function returnKey(exchange: string, routingKey: string, messageId: unknown): string {
  return `${exchange}\u0000${routingKey}\u0000${String(messageId)}`;
}

/**
 * Matches the confirms and returns of one confirm channel to the publishes they answer. The broker
 * numbers confirms from 1 in publish order, per channel. A mandatory publish that cannot be routed
 * gets a basic.return and then a basic.ack; the return carries no delivery tag, so it is matched to
 * the oldest unconfirmed, not yet returned publish with the same exchange, routing key and message
 * id (returns come in publish order). The id alone is not enough: a retry of the same message to
 * another topic may be in flight. Publishes alike in all three are interchangeable: should bindings
 * change between them, one copy was routed, which is all at-least-once delivery needs.
 */
export class ConfirmTracker {
  private nextTag = 1;
  private readonly byTag = new Map<number, PendingPublish>();
  private readonly byKey = new Map<string, PendingPublish[]>();

  constructor(private readonly settle: Settle) {}

  /** Unconfirmed publishes, including timed-out ones the broker may still confirm. */
  get size(): number {
    return this.byTag.size;
  }

  /** Records a publish just written to the channel; `key` is its {@link returnKey}. */
  sent(pending: PendingPublish, key: string): void {
    this.byTag.set(this.nextTag++, pending);
    pending.returnKey = key;
    const same = this.byKey.get(key);
    if (same) same.push(pending);
    else this.byKey.set(key, [pending]);
  }

  acked(tag: number, multiple: boolean): void {
    this.confirm(tag, multiple, (p) =>
      p.returned
        ? new PublishError(
            'SURETY_PUBLISH_UNROUTABLE',
            `message ${p.out.message.id} to "${p.out.topic}" was returned: no queue is bound for it`,
          )
        : undefined,
    );
  }

  nacked(tag: number, multiple: boolean): void {
    this.confirm(
      tag,
      multiple,
      (p) => new PublishError('SURETY_PUBLISH_NACKED', `broker nacked message ${p.out.message.id} to "${p.out.topic}"`),
    );
  }

  /** Marks the returned publish; false when none matches. */
  returned(key: string): boolean {
    const match = this.byKey.get(key)?.find((p) => !p.returned);
    if (match) match.returned = true;
    return match !== undefined;
  }

  /** The channel is gone: nothing it carried will be confirmed. */
  failAll(error: (p: PendingPublish) => PublishError): void {
    const all = [...this.byTag.values()];
    this.byTag.clear();
    this.byKey.clear();
    for (const p of all) this.settle(p, error(p));
  }

  private confirm(tag: number, multiple: boolean, verdict: (p: PendingPublish) => PublishError | undefined): void {
    if (!multiple) {
      const p = this.byTag.get(tag);
      if (p) this.finish(tag, p, verdict);
      return;
    }
    // Map iteration follows insertion order, which is tag order.
    for (const [t, p] of this.byTag) {
      if (t > tag) break;
      this.finish(t, p, verdict);
    }
  }

  private finish(tag: number, p: PendingPublish, verdict: (p: PendingPublish) => PublishError | undefined): void {
    this.byTag.delete(tag);
    const key = p.returnKey;
    const same = this.byKey.get(key);
    if (same && same.length > 1) same.splice(same.indexOf(p), 1);
    else this.byKey.delete(key);
    this.settle(p, verdict(p));
  }
}
