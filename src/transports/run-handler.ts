import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Delivery } from '../ports/transport.js';

/**
 * Runs a subscription's handler on one delivery. A handler may settle its delivery later, after it
 * returns; only one that throws with its delivery still unsettled gets a retry (so a redelivery).
 * `settled` is read where the delivery has it; one without it counts as unsettled. `fields` say where
 * the delivery came from, for the log line.
 */
export async function runHandler<D extends Delivery & { readonly settled?: boolean }>(
  handler: (delivery: D) => Promise<void>,
  delivery: D,
  logger: Logger,
  fields: Record<string, unknown>,
): Promise<void> {
  try {
    await handler(delivery);
  } catch (err) {
    const line = { ...fields, messageId: delivery.message.id, err: describeError(err) };
    if (delivery.settled === true) return logger.warn(line, 'handler failed after settling its delivery');
    logger.warn(line, 'handler failed without settling its delivery; it will be redelivered');
    await delivery.retry();
  }
}
