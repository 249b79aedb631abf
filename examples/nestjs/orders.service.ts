import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Outbox } from 'surety';
import { SURETY_OUTBOX } from 'surety/nestjs';

@Injectable()
export class OrdersService {
  // An explicit token: tsx and vitest (esbuild) emit no decorator metadata for Nest to inject by type.
  constructor(@Inject(SURETY_OUTBOX) private readonly outbox: Outbox) {}

  /** The order and its event commit together; the relay in this process is woken by the commit. */
  async place(total: number): Promise<{ id: string }> {
    const id = randomUUID();
    await this.outbox.transaction(async (tx) => {
      await tx.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [id, total]);
      await this.outbox.add(tx, { type: 'order.created', key: id, payload: { id, total } });
    });
    return { id };
  }
}
