import { PublishError, describeError, someCause } from '../../core/errors.js';
import type { OutgoingMessage } from '../../ports/transport.js';
import type { NatsConnectionManager } from './connection.js';
import type { NatsDriver } from './driver.js';
import type { ResolvedNatsOptions } from './options.js';
import { toNatsHeaders } from './wire-mapping.js';

/**
 * Publishes with `Nats-Msg-Id` set to the message id and resolves on the stream's PubAck, many at
 * once. A PubAck marked `duplicate` (a resend within the stream's duplicate window) counts as
 * published: the stream holds the message. Nothing is buffered while disconnected, and a publish
 * in flight when the connection drops rejects at once (its PubAck can no longer arrive); resending
 * it is safe, the stream dedupes it.
 */
export class JetStreamPublisher {
  private closed = false;
  private readonly inFlight = new Set<(err: PublishError) => void>();

  constructor(
    private readonly manager: NatsConnectionManager,
    private readonly driver: NatsDriver,
    private readonly options: ResolvedNatsOptions,
  ) {
    manager.onLost(() =>
      this.failAll(
        new PublishError('SURETY_CONNECTION_LOST', 'the NATS connection was lost before the PubAck arrived'),
      ),
    );
  }

  async publish(out: OutgoingMessage): Promise<void> {
    if (this.closed) throw new PublishError('SURETY_TRANSPORT_CLOSED', 'the NATS transport is closed');
    const session = this.manager.current;
    if (!session)
      throw new PublishError('SURETY_CONNECTION_LOST', 'not connected to NATS (publishes are not buffered)');
    const { message } = out;
    const subject = this.options.subject(out.topic);
    let headers;
    try {
      headers = toNatsHeaders(this.driver, message);
    } catch (err) {
      throw new PublishError('SURETY_PUBLISH_REFUSED', `message ${message.id}: ${describeError(err)}`, { cause: err });
    }
    let fail!: (err: PublishError) => void;
    const lost = new Promise<never>((_, reject) => (fail = reject));
    this.inFlight.add(fail);
    try {
      await Promise.race([
        session.js.publish(subject, message.body, {
          msgID: message.id,
          headers,
          timeout: this.options.publishTimeoutMs,
        }),
        lost,
      ]);
    } catch (err) {
      throw this.translate(err, message.id, subject);
    } finally {
      this.inFlight.delete(fail);
    }
  }

  close(): void {
    this.closed = true;
    this.failAll(new PublishError('SURETY_TRANSPORT_CLOSED', 'the NATS transport closed before the PubAck arrived'));
  }

  private failAll(err: PublishError): void {
    for (const fail of [...this.inFlight]) fail(err);
    this.inFlight.clear();
  }

  /** Driver errors by class name, never by message text. */
  private translate(err: unknown, id: string, subject: string): PublishError {
    if (err instanceof PublishError) return err;
    const name = (err as { name?: unknown } | null)?.name;
    const named = (wanted: string): boolean => someCause(err, (e) => (e as { name?: unknown }).name === wanted);
    if (someCause(err, (e) => (e as { isNoResponders?: () => boolean }).isNoResponders?.() === true))
      return new PublishError('SURETY_PUBLISH_UNROUTABLE', `no stream stores subject "${subject}" (message ${id})`, {
        cause: err,
      });
    if (named('TimeoutError'))
      return new PublishError(
        'SURETY_PUBLISH_TIMEOUT',
        `no PubAck for message ${id} within ${this.options.publishTimeoutMs} ms`,
        { cause: err },
      );
    if (named('ClosedConnectionError') || named('DrainingConnectionError'))
      return new PublishError(
        this.closed ? 'SURETY_TRANSPORT_CLOSED' : 'SURETY_CONNECTION_LOST',
        `the NATS connection closed before the PubAck of message ${id}`,
        { cause: err },
      );
    if (name === 'JetStreamApiError')
      return new PublishError('SURETY_PUBLISH_REFUSED', `JetStream refused message ${id}: ${describeError(err)}`, {
        cause: err,
      });
    return new PublishError('SURETY_PUBLISH_NACKED', `publish of message ${id} failed: ${describeError(err)}`, {
      cause: err,
    });
  }
}
