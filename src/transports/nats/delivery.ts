import { SuretyError, describeError } from '../../core/errors.js';
import type { WireMessage } from '../../core/wire.js';
import type { Delivery, DeliveryExhausted } from '../../ports/transport.js';
import type { JsMsg } from './driver.js';
import { fromNatsMessage } from './wire-mapping.js';

/*
 * Always a delayed nak: NATS 2.9's plain -NAK of several messages in a row redelivered one of them
 * twice and left the other unacknowledged until ack_wait (seen against 2.9.10); a delayed one does not.
 */
const MIN_NAK_DELAY_MS = 1;

/**
 * A message of a durable pull consumer. While its handler runs unsettled it tells JetStream it is
 * still being worked on every half `ack_wait`, so a long handler is not redelivered under it; a
 * message left unsettled after its handler returned is redelivered after `ack_wait`. Settling is
 * idempotent. Its last allowed delivery (`max_deliver`) comes marked `exhausted`: JetStream will
 * not deliver it again, so the consumer records it as a dead letter instead of running the handler.
 */
export class JetStreamDelivery implements Delivery {
  readonly message: WireMessage;
  readonly redeliveries: number;
  readonly exhausted?: DeliveryExhausted;
  private done = false;
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(
    private readonly msg: JsMsg,
    readonly topic: string,
    private readonly settings: {
      readonly ackWaitMs: number;
      readonly maxDeliver: number;
      readonly retryDelayMs: number;
    },
    private readonly onSettled: (delivery: JetStreamDelivery) => void = () => {},
  ) {
    this.message = fromNatsMessage({ headers: () => msg.headers, data: msg.data });
    const count = msg.info.deliveryCount;
    this.redeliveries = Math.max(0, count - 1);
    if (count >= settings.maxDeliver) this.exhausted = { reason: 'max_deliveries', deliveries: count - 1 };
  }

  /** Tells JetStream every half ack_wait that the message is being worked on, until `work` ends or it is settled. */
  keepAliveWhile(work: Promise<unknown>): void {
    if (this.done) return;
    const timer = setInterval(
      () => quietly(() => this.msg.working()),
      Math.max(50, Math.floor(this.settings.ackWaitMs / 2)),
    );
    timer.unref();
    this.keepAlive = timer;
    void work.then(
      () => clearInterval(timer),
      () => clearInterval(timer),
    );
  }

  get settled(): boolean {
    return this.done;
  }

  /** Resolves once JetStream confirmed the ack: an ack after the commit is known to be recorded. */
  async ack(): Promise<void> {
    if (!this.settle()) return;
    try {
      await this.msg.ackAck();
    } catch (err) {
      throw new SuretyError('SURETY_CONNECTION_LOST', `JetStream did not confirm the ack: ${describeError(err)}`, {
        cause: err,
      });
    }
  }

  /** Hands the message back (a nak, after `retryDelayMs`); JetStream counts it toward `max_deliver`. */
  retry(): Promise<void> {
    if (this.settle()) quietly(() => this.msg.nak(Math.max(MIN_NAK_DELAY_MS, this.settings.retryDelayMs)));
    return Promise.resolve();
  }

  /** Stops the keep-alive: the subscription closed, the message goes back at once. */
  release(): void {
    if (this.settle()) quietly(() => this.msg.nak(MIN_NAK_DELAY_MS));
  }

  private settle(): boolean {
    if (this.done) return false;
    this.done = true;
    clearInterval(this.keepAlive);
    this.onSettled(this);
    return true;
  }
}

/** A settle frame on a closed connection throws; JetStream redelivers after ack_wait anyway. */
function quietly(send: () => void): void {
  try {
    send();
  } catch {
    // nothing to do: the message stays unacknowledged on the server
  }
}
