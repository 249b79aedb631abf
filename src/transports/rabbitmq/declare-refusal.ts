import { SuretyError, describeError } from '../../core/errors.js';
import { parkingArguments } from './dead-letter-parking.js';
import { inequivalentSetting } from './queue-settings.js';

/**
 * RabbitMQ refused to declare a queue as configured, most often because it exists with other
 * settings (reply code 406, PRECONDITION_FAILED). Retrying cannot help: the topology or the queue
 * must change. `replyCode` is the broker's AMQP reply code; `setting` the one it named, if any.
 * @example
 * try {
 *   await transport.subscribe({ group: 'billing', topics: ['order.created'] }, handle);
 * } catch (err) {
 *   if (err instanceof QueueDeclarationRefusedError) console.error(err.queue, err.setting, err.message);
 *   throw err;
 * }
 */
export class QueueDeclarationRefusedError extends SuretyError {
  constructor(
    readonly queue: string,
    readonly replyCode: number,
    readonly setting: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('SURETY_INVALID_OPTION', message, options);
  }
}

const PARKING_SETTINGS = new Set(Object.keys(parkingArguments('')));

/**
 * `err` as a {@link QueueDeclarationRefusedError} when it is the broker's refusal (an AMQP reply
 * code); anything else (a lost connection) is returned as is.
 */
export function declarationRefusal(err: unknown, queue: string): unknown {
  const replyCode = (err as { code?: unknown } | null)?.code;
  if (typeof replyCode !== 'number') return err;
  const found = inequivalentSetting(err);
  const options = { cause: err };
  if (found && PARKING_SETTINGS.has(found.key)) {
    return new QueueDeclarationRefusedError(
      queue,
      replyCode,
      found.key,
      `RabbitMQ refused to declare queue "${queue}": it exists with ${found.value === undefined ? 'no' : 'another'} ${found.key}, ` +
        `and Surety declares quorum queues with dead-letter parking (so that a message past the delivery limit reaches the ` +
        `dead-letter table instead of being dropped). Move its messages away, delete it and let Surety declare it again; ` +
        `or give it a dead-letter exchange of your own (topology queue deadLetterExchange, then parking is off) or set ` +
        `deadLetterParking: false in the topology. See "Delivery limits" in docs/guarantees.md`,
      options,
    );
  }
  const hint = found
    ? `: it exists with another ${found.key} (currently ${found.value === undefined ? 'none' : JSON.stringify(found.value)}). ` +
      'List it in the topology as it exists, or delete it and let Surety declare it again'
    : `: ${describeError(err)}`;
  return new QueueDeclarationRefusedError(
    queue,
    replyCode,
    found?.key,
    `RabbitMQ refused to declare queue "${queue}"${hint}`,
    options,
  );
}
