import { Module } from '@nestjs/common';
import { SuretyModule } from 'surety/nestjs';
import { createPostgresStore } from 'surety/postgres';
import { createRabbitMqTransport } from 'surety/rabbitmq';
import { AppSchema } from './app-schema.js';
import { BillingHandler } from './billing.handler.js';
import { OrdersController } from './orders.controller.js';
import { OrdersService } from './orders.service.js';

@Module({
  imports: [
    SuretyModule.forRoot({
      // Factories: the module creates these at start and closes them at shutdown.
      store: () => createPostgresStore({ connectionString: process.env.DATABASE_URL! }),
      transport: () =>
        createRabbitMqTransport({
          url: process.env.AMQP_URL ?? 'amqp://guest:guest@localhost:5672',
          exchange: 'shop',
          topology: {
            queues: [{ name: 'billing', type: 'quorum' }],
            bindings: [{ exchange: 'shop', queue: 'billing', pattern: 'order.*' }],
          },
        }),
      migrate: true,
      consumers: [{ group: 'billing' }],
    }),
  ],
  controllers: [OrdersController],
  providers: [AppSchema, OrdersService, BillingHandler],
})
export class AppModule {}
