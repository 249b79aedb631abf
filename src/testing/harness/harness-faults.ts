import { PublishError } from '../../core/errors.js';
import type { DeliveryMatcher, FaultySubscriber } from './faulty-subscriber.js';
import type { FaultyPublisher } from './faulty-publisher.js';

/**
 * Faults injected into the harness's pipeline, to test that your handlers and flows hold up.
 * @example
 * harness.faults.deliverTwice(); // the next delivery arrives twice: the inbox must skip the copy
 * await placeOrder();
 * await harness.settled();
 */
export interface HarnessFaults {
  /**
   * The next `n` publishes (default 1) fail with `error` (default: a nack, SURETY_PUBLISH_NACKED):
   * the relay records a failed attempt and retries after its backoff, on the harness clock.
   */
  failNextPublish(n?: number, error?: Error): void;
  /**
   * The broker connection is lost until restored: the transport reports not ready and publishes fail
   * with SURETY_CONNECTION_LOST (no attempt is charged). Returns the restore.
   */
  dropConnection(): () => void;
  restoreConnection(): void;
  /**
   * The next delivery (the next one `matcher` accepts) is handed to its consumer twice, as after a
   * lost ack: the consumer's inbox must absorb the copy, and the handler runs once.
   */
  deliverTwice(matcher?: DeliveryMatcher): void;
  /**
   * The next producer commit is followed by a crash of its process's fast path: the relay is not
   * woken by that commit, and only its own claim (the poll) publishes the message.
   */
  crashAfterCommit(): void;
}

/** The faults, acting on the harness's publisher and subscriber and on its commit hook (`crash`). */
export function harnessFaults(
  publisher: FaultyPublisher,
  subscriber: FaultySubscriber,
  crash: () => void,
): HarnessFaults {
  const restore = () => publisher.restore();
  return Object.freeze({
    failNextPublish(n = 1, error?: Error) {
      if (!Number.isInteger(n) || n < 1)
        throw new RangeError(`failNextPublish(n): n must be an integer >= 1, got ${n}`);
      publisher.failNext(
        n,
        error ?? new PublishError('SURETY_PUBLISH_NACKED', 'the broker nacked the publish (injected fault)'),
      );
    },
    dropConnection() {
      publisher.drop();
      return restore;
    },
    restoreConnection: restore,
    deliverTwice: (matcher?: DeliveryMatcher) => subscriber.deliverTwice(matcher),
    crashAfterCommit: crash,
  });
}
