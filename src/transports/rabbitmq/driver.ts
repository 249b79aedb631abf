import { DriverMissingError } from '../../core/errors.js';

/*
 * The few amqplib shapes this adapter uses, declared structurally (as Kysely does) so that the
 * public declarations never import amqplib, which stays an optional peer dependency.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- listeners mirror amqplib's `(...args: any[]) => void` so its classes fit */
export interface AmqpEmitter {
  on(event: string, listener: (...args: any[]) => void): unknown;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface AmqpMessage {
  readonly content: Buffer;
  readonly fields: {
    readonly deliveryTag: number;
    readonly redelivered: boolean;
    readonly exchange: string;
    readonly routingKey: string;
  };
  readonly properties: {
    readonly messageId?: unknown;
    readonly headers?: Record<string, unknown> | undefined;
  };
}

export interface AmqpPublishOptions {
  readonly mandatory: boolean;
  readonly deliveryMode: number;
  readonly contentType: string;
  readonly messageId: string;
  readonly type?: string;
  readonly timestamp: number;
  readonly headers: Readonly<Record<string, string>>;
}

export interface AmqpQueueCounts {
  readonly messageCount: number;
  readonly consumerCount: number;
}

/** What topology declaration needs from a channel; amqplib's `Channel` satisfies it. */
export interface AmqpTopologyChannel {
  assertExchange(name: string, type: string, options?: Record<string, unknown>): Promise<unknown>;
  assertQueue(name: string, options?: Record<string, unknown>): Promise<unknown>;
  bindQueue(queue: string, source: string, pattern: string, args?: Record<string, unknown>): Promise<unknown>;
}

export interface AmqpChannel extends AmqpEmitter, AmqpTopologyChannel {
  close(): Promise<void>;
  checkQueue(name: string): Promise<AmqpQueueCounts>;
  prefetch(count: number, global?: boolean): Promise<unknown>;
  consume(
    queue: string,
    onMessage: (msg: AmqpMessage | null) => void,
    options?: { noAck?: boolean },
  ): Promise<{ consumerTag: string }>;
  cancel(consumerTag: string): Promise<unknown>;
  ack(message: AmqpMessage, allUpTo?: boolean): void;
  nack(message: AmqpMessage, allUpTo?: boolean, requeue?: boolean): void;
  publish(exchange: string, routingKey: string, content: Buffer, options?: AmqpPublishOptions): boolean;
}

export interface AmqpConnection extends AmqpEmitter {
  /** amqplib's underlying connection: what the server said about itself (`version`, `product`). */
  readonly connection?: { readonly serverProperties?: Readonly<Record<string, unknown>> };
  createChannel(): Promise<AmqpChannel>;
  createConfirmChannel(): Promise<AmqpChannel>;
  close(): Promise<void>;
}

export interface AmqpDriver {
  connect(url: string, socketOptions?: { clientProperties?: Record<string, unknown> }): Promise<AmqpConnection>;
}

/**
 * Imports amqplib on first use so that applications without RabbitMQ need not install it.
 * `importer` exists for tests.
 */
export async function loadAmqplib(importer: () => Promise<AmqpDriver> = () => import('amqplib')): Promise<AmqpDriver> {
  try {
    return await importer();
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new DriverMissingError('amqplib', { cause: err });
    throw err;
  }
}
