// A NestJS order service: POST /orders writes an order and its order.created event in one transaction;
// the relay publishes it to RabbitMQ and the billing handler invoices it exactly once.
// DATABASE_URL (PostgreSQL), AMQP_URL and PORT (default 3000; 0 picks a free one).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
// SIGTERM and SIGINT run the shutdown hooks: Surety stops its replay job, consumer and relay, then closes.
app.enableShutdownHooks();
// After its hooks Nest raises the signal again to end the process; with this listener the process
// instead exits (code 0) once nothing is left running, so a connection left open would show as a hang.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => undefined);
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
console.log(`orders service listening on ${await app.getUrl()}`);
