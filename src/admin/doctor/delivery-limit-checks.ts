import type { QueueState } from '../../ports/broker-probe.js';
import { count, plural } from './format.js';
import type { DoctorCheck, DoctorFacts } from './types.js';

const place = 'broker' as const;

/**
 * What happens to a message the broker gives up on (past the queue's delivery limit): dropped
 * (a failure), dead-lettered past the dead-letter table (a warning with the table's engine), or
 * never given up on under broker retries (a warning: redelivered forever). Parking queues are
 * Surety's own and skipped.
 */
export function deliveryLimitChecks(
  q: QueueState,
  facts: Required<DoctorFacts>,
  isParkingQueue: boolean,
): DoctorCheck[] {
  const limit = q.deliveryLimit;
  if (limit === undefined || q.deadLetters === undefined || isParkingQueue) return [];
  const base = { id: 'broker.delivery-limit', place } as const;
  const retryStrategy = facts.retryStrategy;
  if (limit !== null && q.deadLetters === null) {
    const byDefault = q.arguments?.['x-delivery-limit'] === undefined ? " (RabbitMQ 4's default)" : '';
    const causes = retryStrategy === 'broker' ? 'a failing handler, ' : '';
    const policyHint =
      q.source === 'amqp' ? " (a policy's dead-letter exchange is only visible through the management API)" : '';
    return [
      {
        ...base,
        level: 'fail',
        message: `${q.name} gives up on a message after ${plural(limit, 'delivery', 'deliveries')}${byDefault} and has no dead-letter exchange — a message past the limit (${causes}a consumer crash loop, a long database outage) is dropped${policyHint}`,
        facts: { queue: q.name, deliveryLimit: limit, deadLetterExchange: null, retryStrategy },
        nextStep: `let Surety declare ${q.name} with dead-letter parking (its default): move its messages away, delete it, and start the consumer; or give it a dead-letter exchange`,
      },
    ];
  }
  if (limit !== null && q.deadLetters !== null && q.deadLetters.parkingQueue === null) {
    if (retryStrategy !== 'dead-letter-table') return [];
    return [
      {
        ...base,
        level: 'warn',
        message: `${q.name} has a delivery limit of ${count(limit)}: after ${plural(limit, 'redelivery', 'redeliveries')} (a consumer crashing or its database down) the broker dead-letters the message to ${q.deadLetters.exchange} itself, overriding the dead-letter table's retry policy`,
        facts: { queue: q.name, deliveryLimit: limit, deadLetterExchange: q.deadLetters.exchange, retryStrategy },
        nextStep: `drop ${q.name}'s own dead-letter exchange so that Surety's dead-letter parking brings such messages to the dead-letter table, or drain ${q.deadLetters.exchange} into it yourself`,
      },
    ];
  }
  if (limit === null && q.type === 'quorum' && retryStrategy === 'broker') {
    return [
      {
        ...base,
        level: 'warn',
        message: `${q.name} has no x-delivery-limit while the consumers use the broker retry strategy — a message that always fails is redelivered forever`,
        facts: { queue: q.name, deliveryLimit: null, retryStrategy },
        nextStep: `declare ${q.name} with a delivery limit (its dead letters are then parked for the dead-letter table)`,
      },
    ];
  }
  return [];
}

/** A queue with Surety's dead-letter parking: its parking queue must exist and be drained. */
export function parkingCheck(q: QueueState, parking: QueueState): DoctorCheck {
  const base = {
    id: 'broker.dead-letter-parking',
    place,
    facts: {
      queue: q.name,
      parkingQueue: parking.name,
      exists: parking.exists,
      ready: parking.ready,
      consumers: parking.consumers,
    },
  } as const;
  if (!parking.exists) {
    return {
      ...base,
      level: 'warn',
      message: `${parking.name}, where ${q.name} parks the messages it gives up on, does not exist — they wait in ${q.name} until it does`,
      nextStep: `start the consumer of ${q.name}: it declares ${parking.name} (or declare the topology again)`,
    };
  }
  if (parking.consumers === 0) {
    return {
      ...base,
      level: 'warn',
      message: `${parking.name} has no consumer — messages ${q.name} gives up on wait there (${count(parking.ready)} now) instead of reaching the dead-letter table`,
      nextStep: `start the consumer of ${q.name}: it drains ${parking.name} into its dead-letter table`,
    };
  }
  return {
    ...base,
    level: 'ok',
    message: `${q.name} parks the messages it gives up on in ${parking.name} (${plural(parking.consumers, 'consumer')})`,
  };
}
