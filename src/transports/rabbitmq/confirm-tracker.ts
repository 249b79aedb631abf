import type { OutgoingMessage } from '../../ports/transport.js';
import { PublishError } from '../../core/errors.js';

/** One publish awaiting the broker's verdict. */
export interface PendingPublish {
  readonly out: OutgoingMessage;
  /** Epoch ms after which the publish rejects with SURETY_PUBLISH_TIMEOUT; renewed when it is republished. */
  deadline: number;
  /** Where it was written to, set once written: a return names these and the message id. */
  exchange: string;
  routingKey: string;
  /** The broker returned it (unroutable); its ack must not count as success. */
  returned: boolean;
  /** Times it was written again after a channel closed before confirming it. */
  republished: number;
  settled: boolean;
  readonly resolve: () => void;
  readonly reject: (err: PublishError) => void;
}

export type Settle = (pending: PendingPublish, err?: PublishError) => void;

/** What a closed channel left unconfirmed, in publish order, split by what the broker confirmed. */
export interface Unconfirmed {
  /** Written before a publish the broker confirmed: the broker handled them, their confirms are lost. */
  readonly processed: PendingPublish[];
  /** Written after every publish the broker confirmed: handled or not, nothing tells. */
  readonly unknown: PendingPublish[];
}

/** What a basic.return says of the message it gives back. */
export interface ReturnedMessage {
  readonly exchange: string;
  readonly routingKey: string;
  readonly messageId: unknown;
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
  /** The highest tag an ack or nack covered: the broker has handled every publish up to it. */
  private highestConfirmed = 0;

  constructor(private readonly settle: Settle) {}

  /** Unconfirmed publishes, including timed-out ones the broker may still confirm. */
  get size(): number {
    return this.byTag.size;
  }

  /** Records a publish just written to the channel. */
  sent(pending: PendingPublish): void {
    this.byTag.set(this.nextTag++, pending);
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

  /**
   * Marks the returned publish; false when none matches. A scan in tag order rather than an index
   * kept per publish: returns are rare (a missing binding), publishes are not.
   */
  returned(r: ReturnedMessage): boolean {
    for (const p of this.byTag.values()) {
      if (p.returned || p.out.message.id !== r.messageId) continue;
      if (p.exchange !== r.exchange || p.routingKey !== r.routingKey) continue;
      p.returned = true;
      return true;
    }
    return false;
  }

  /**
   * The channel is gone: takes every publish still waiting for its confirm (timed-out ones aside).
   * A broker handles a channel's publishes in order, so those written before the last one it
   * confirmed were handled.
   */
  takeUnconfirmed(): Unconfirmed {
    const processed: PendingPublish[] = [];
    const unknown: PendingPublish[] = [];
    for (const [tag, p] of this.byTag) {
      if (!p.settled) (tag < this.highestConfirmed ? processed : unknown).push(p);
    }
    this.byTag.clear();
    return { processed, unknown };
  }

  /** The channel is gone: nothing it carried will be confirmed. */
  failAll(error: (p: PendingPublish) => PublishError): void {
    const all = [...this.byTag.values()];
    this.byTag.clear();
    for (const p of all) this.settle(p, error(p));
  }

  private confirm(tag: number, multiple: boolean, verdict: (p: PendingPublish) => PublishError | undefined): void {
    if (tag > this.highestConfirmed) this.highestConfirmed = tag;
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
    this.settle(p, verdict(p));
  }
}
