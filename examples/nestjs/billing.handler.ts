import { Injectable } from '@nestjs/common';
import { PermanentError, type HandlerContext } from 'surety';
import { SuretyHandler } from 'surety/nestjs';

@Injectable()
export class BillingHandler {
  /** Runs in the billing consumer's transaction: the invoice and the inbox record commit together. */
  @SuretyHandler('order.created', { group: 'billing' })
  async invoice(order: { id: string; total: number }, { tx }: HandlerContext): Promise<void> {
    if (order.total < 0) throw new PermanentError('negative total'); // a dead letter at once, never retried
    await tx.query('INSERT INTO invoices (order_id, total) VALUES ($1, $2)', [order.id, order.total]);
    console.log(`invoiced order ${order.id}`);
  }
}
