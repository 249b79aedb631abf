import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { WireMessage } from '../../core/wire.js';
import type { Delivery, DeliveryExhausted } from '../../ports/transport.js';
import type { NatsSession } from './connection.js';
import { fromNatsMessage } from './wire-mapping.js';

/** The advisory JetStream publishes when it stops redelivering a message of `consumer`. */
export function maxDeliveriesSubject(stream: string, consumer: string): string {
  return `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`;
}

/**
 * A message JetStream gave up on, read back from the stream by sequence. There is nothing left to
 * acknowledge: JetStream no longer tracks it. The consumer records it as a dead letter.
 */
class AdvisedDelivery implements Delivery {
  constructor(
    readonly message: WireMessage,
    readonly topic: string,
    readonly exhausted: DeliveryExhausted,
  ) {}

  get redeliveries(): number {
    return this.exhausted.deliveries ?? 0;
  }

  ack(): Promise<void> {
    return Promise.resolve();
  }

  retry(): Promise<void> {
    return Promise.resolve(); // JetStream will not deliver it again; the dead-letter table holds it
  }
}

/**
 * The backstop of `max_deliver`: its last delivery normally reaches the handler marked exhausted,
 * but when a consumer dies holding it (or lets it time out), JetStream only says so in an advisory.
 * One subscriber of the group (a queue subscription) reads the message back and hands it over, so
 * that it never vanishes silently. Advisories published while no subscriber is connected are lost:
 * the doctor's `num_redelivered` and the stream keep the message visible to an operator.
 */
export function followExhaustedAdvisories(
  session: NatsSession,
  target: { readonly stream: string; readonly durable: string; readonly topicOf: (subject: string) => string },
  handle: (delivery: Delivery) => Promise<void>,
  logger: Logger,
): { unsubscribe(): void } {
  const subject = maxDeliveriesSubject(target.stream, target.durable);
  return session.nc.subscribe(subject, {
    queue: `surety.${target.stream}.${target.durable}`,
    callback: (err, msg) => {
      if (err) return;
      void (async () => {
        const advisory = JSON.parse(new TextDecoder().decode(msg.data)) as {
          stream_seq?: unknown;
          deliveries?: unknown;
        };
        if (typeof advisory.stream_seq !== 'number') return;
        const stored = await session.jsm.streams.getMessage(target.stream, { seq: advisory.stream_seq });
        if (!stored) {
          logger.error({ ...target, seq: advisory.stream_seq }, 'exhausted message no longer in the stream');
          return;
        }
        const deliveries = typeof advisory.deliveries === 'number' ? advisory.deliveries : null;
        const message = fromNatsMessage({ headers: () => stored.header, data: stored.data });
        await handle(
          new AdvisedDelivery(message, target.topicOf(stored.subject), { reason: 'max_deliveries', deliveries }),
        );
      })().catch((e: unknown) =>
        logger.error({ err: describeError(e), subject }, 'could not hand over an exhausted message'),
      );
    },
  });
}
