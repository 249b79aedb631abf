import { describeError, SuretyError } from '../core/errors.js';
import type { FailureUpdate, OutboxRow } from '../ports/outbox-store.js';
import type { Logger } from '../core/logger.js';
import type { RelayMetrics } from './relay-metrics.js';
import type { ResolvedRelayOptions } from './relay-options.js';

/** What a failed publish does to its row (backoff, or dead after the last attempt), and how it is reported. */
export class RelayFailures {
  constructor(
    private readonly o: ResolvedRelayOptions,
    private readonly metrics: RelayMetrics,
    private readonly log: Logger,
  ) {}

  /**
   * The attempt count, next attempt and status a failed publish leaves `row` with. A failure that
   * says nothing about the message (see {@link isInterruption}) is not charged: the row keeps its
   * attempts and is due again after the first backoff step, so a flapping broker never kills rows.
   */
  update(row: OutboxRow, error: unknown): FailureUpdate {
    const o = this.o;
    if (isInterruption(error)) {
      const now = o.clock.now();
      const nextAttemptAt = now + o.backoff.delayMs(1);
      const common = { seq: row.seq, owner: o.relayId, nextAttemptAt, error: describeError(error), now };
      return { ...common, attempts: row.attempts, dead: false, charged: false };
    }
    const attempts = row.attempts + 1;
    const dead = attempts >= o.maxAttempts;
    const now = o.clock.now();
    const nextAttemptAt = dead ? now : now + o.backoff.delayMs(attempts);
    return { seq: row.seq, owner: o.relayId, attempts, nextAttemptAt, dead, error: describeError(error), now };
  }

  /** After the failure is recorded: a log line and, for a dead row, the metric and the alert hook. */
  async report(row: OutboxRow, u: FailureUpdate, error: unknown): Promise<void> {
    const { attempts, nextAttemptAt, error: reason } = u;
    if (u.charged === false) {
      this.log.warn(
        { messageId: row.messageId, type: row.type, attempts, nextAttemptAt, reason },
        'publish interrupted; will retry without counting an attempt',
      );
      return;
    }
    if (!u.dead) {
      this.log.warn(
        { messageId: row.messageId, type: row.type, attempts, nextAttemptAt, reason },
        'publish failed; will retry',
      );
      return;
    }
    this.metrics.dead.inc();
    this.log.error(
      { messageId: row.messageId, type: row.type, key: row.key, attempts, reason },
      'outbox row is dead after its last attempt',
    );
    try {
      await this.o.onDead?.({ ...row, attempts, status: 'dead', lastError: reason }, error);
    } catch (err) {
      this.log.error({ err: describeError(err), messageId: row.messageId }, 'onDead hook threw');
    }
  }
}

/**
 * Whether a publish failed for a reason outside the message: the connection to the broker was lost
 * (before or while it was in flight) or the transport was closed. Such a failure is no attempt.
 */
export function isInterruption(error: unknown): boolean {
  return (
    error instanceof SuretyError &&
    (error.code === 'SURETY_CONNECTION_LOST' || error.code === 'SURETY_TRANSPORT_CLOSED')
  );
}

/** The metrics label of a publish error. */
export function outcomeOf(error: unknown): string {
  if (!(error instanceof SuretyError)) return 'error';
  switch (error.code) {
    case 'SURETY_PUBLISH_NACKED':
      return 'nacked';
    case 'SURETY_PUBLISH_UNROUTABLE':
      return 'unroutable';
    case 'SURETY_PUBLISH_REFUSED':
      return 'refused';
    case 'SURETY_PUBLISH_TIMEOUT':
      return 'timeout';
    case 'SURETY_CONNECTION_LOST':
      return 'connection_lost';
    default:
      return 'error';
  }
}
