import { z } from 'zod';
import { integerIn, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import { nest } from './nest-packages.js';

/** The metadata key of a `@SuretyHandler` method. */
export const SURETY_HANDLER_METADATA = 'surety:handler';

export interface SuretyHandlerOptions {
  /** The consumer group (one of SuretyModule's `consumers`) whose consumer runs this handler. */
  readonly group: string;
  /** The payload version the handler is written for (see `consumer.on`). Default 1. */
  readonly version?: number;
}

/** What `@SuretyHandler` records on a method. */
export interface SuretyHandlerMetadata {
  readonly type: string;
  readonly group: string;
  readonly version: number;
}

const schema = z.strictObject({
  type: nonEmptyString(),
  group: nonEmptyString(),
  version: integerIn(1).default(1),
});

/**
 * Makes a provider's method the handler of a message type on a group's consumer, registered before
 * the consumer starts. It is called as `consumer.on` handlers are: `(payload, context)`, with
 * `context.tx` the consumer's transaction, in which the handler's writes commit with the inbox record.
 * @example
 * @Injectable()
 * export class BillingHandler {
 *   @SuretyHandler('order.created', { group: 'billing' })
 *   async invoice(order: { id: string }, { tx }: HandlerContext): Promise<void> {
 *     await tx.query('INSERT INTO invoices (order_id) VALUES ($1)', [order.id]);
 *   }
 * }
 */
export function SuretyHandler(type: string, options: SuretyHandlerOptions): MethodDecorator {
  const metadata: SuretyHandlerMetadata = parseOptions(schema, { type, ...options }, '@SuretyHandler');
  return nest.common.SetMetadata(SURETY_HANDLER_METADATA, metadata);
}
