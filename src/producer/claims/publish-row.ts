import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { OutboxRow } from '../../ports/outbox-store.js';
import { wireFromRow } from '../outbox-rows.js';
import { outcomeOf } from '../relay-failures.js';
import type { RelayMetrics } from '../relay-metrics.js';
import type { ResolvedRelayOptions } from '../relay-options.js';
import type { PublishOutcome, PublishRow } from './claim-source.js';

/** The relay's publish of one row, with its metrics and the onConfirmed hook; never rejects. */
export function rowPublisher(o: ResolvedRelayOptions, metrics: RelayMetrics, log: Logger): PublishRow {
  const observe = (row: OutboxRow, failed: PublishOutcome, seconds: number) => {
    const outcome = failed ? outcomeOf(failed.cause) : 'confirmed';
    metrics.publishDuration.observe({ outcome }, seconds);
    metrics.attempts.inc({ outcome });
    if (failed) return;
    const hookFailed = (err: unknown) =>
      log.error({ err: describeError(err), messageId: row.messageId }, 'onConfirmed hook threw');
    try {
      // Not awaited: the row is marked sent whatever the hook does, and an async hook must not hold the batch.
      const returned: unknown = o.onConfirmed?.(row);
      if (typeof (returned as PromiseLike<void> | undefined)?.then === 'function')
        Promise.resolve(returned).catch(hookFailed);
    } catch (err) {
      hookFailed(err);
    }
  };
  return async (row) => {
    const started = performance.now();
    let failed: PublishOutcome;
    try {
      await o.publisher.publish({ topic: row.topic, message: wireFromRow(row) });
    } catch (cause) {
      failed = { cause }; // also a publisher that throws instead of rejecting: this row fails, no other
    }
    observe(row, failed, (performance.now() - started) / 1000);
    return failed;
  };
}
