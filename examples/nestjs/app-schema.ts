import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Store } from 'surety';
import { SURETY_STORE } from 'surety/nestjs';

/** The application's own tables, created before Surety starts its consumer (at application bootstrap). */
@Injectable()
export class AppSchema implements OnModuleInit {
  constructor(@Inject(SURETY_STORE) private readonly store: Store) {}

  async onModuleInit(): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.query('CREATE TABLE IF NOT EXISTS orders (id uuid PRIMARY KEY, total int NOT NULL)');
      await tx.query('CREATE TABLE IF NOT EXISTS invoices (order_id uuid PRIMARY KEY, total int NOT NULL)');
    });
  }
}
