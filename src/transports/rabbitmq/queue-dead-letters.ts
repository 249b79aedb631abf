import type { QueueState } from '../../ports/broker-probe.js';
import { DEAD_LETTER_EXCHANGE, parkingQueueName } from './dead-letter-parking.js';

/** Since RabbitMQ 4.0 a quorum queue without a delivery limit of its own (or a policy's) has this one. */
export const RABBITMQ_4_DEFAULT_DELIVERY_LIMIT = 20;

export interface QueueSettingsInput {
  readonly name: string;
  /** `quorum`, `classic`, `stream`, or null when unknown. */
  readonly type: string | null;
  /** The declared `x-` arguments, or null when they could not be learnt. */
  readonly arguments: Readonly<Record<string, unknown>> | null;
  /** The effective policy's definition (management API only). */
  readonly policy?: Readonly<Record<string, unknown>>;
  /** The broker's version, e.g. `3.13.7` or `4.0.5`; null when unknown (then 3.x rules apply). */
  readonly serverVersion: string | null;
}

/**
 * What a queue does with a message it gives up on: its effective delivery limit and where it
 * dead-letters, from its arguments, its policy and the broker's version. Only quorum queues have a
 * delivery limit; arguments and policy are combined as RabbitMQ does (the lower limit; the
 * argument's dead-letter exchange over the policy's).
 */
export function deadLetterSettings(q: QueueSettingsInput): Pick<QueueState, 'deliveryLimit' | 'deadLetters'> {
  if (q.arguments === null) return {};
  const policy = q.policy ?? {};
  const exchange = q.arguments['x-dead-letter-exchange'] ?? policy['dead-letter-exchange'];
  const deadLetters =
    typeof exchange === 'string'
      ? { exchange, parkingQueue: exchange === DEAD_LETTER_EXCHANGE ? parkingQueueName(q.name) : null }
      : null;
  if (q.type !== 'quorum') return { deliveryLimit: null, deadLetters };
  const major = Number(/^(\d+)\./.exec(q.serverVersion ?? '')?.[1] ?? 3);
  const limits = [q.arguments['x-delivery-limit'], policy['delivery-limit']].filter(
    (l): l is number => typeof l === 'number' && Number.isFinite(l),
  );
  if (limits.length === 0) return { deliveryLimit: major >= 4 ? RABBITMQ_4_DEFAULT_DELIVERY_LIMIT : null, deadLetters };
  const limit = Math.min(...limits);
  // A negative limit means "none" on 4.x; 3.x gives up on the message at its first return.
  if (limit < 0) return { deliveryLimit: major >= 4 ? null : 0, deadLetters };
  return { deliveryLimit: limit, deadLetters };
}
