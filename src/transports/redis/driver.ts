import { DriverMissingError } from '../../core/errors.js';

/*
 * The few ioredis shapes this adapter uses, declared structurally (as Kysely does) so that the
 * public declarations never import ioredis, which stays an optional peer dependency.
 */

export type RedisArg = string | Buffer | number;

/* eslint-disable @typescript-eslint/no-explicit-any -- listeners mirror ioredis' `(...args: any[]) => void` so its class fits */
export interface RedisClient {
  /** `wait`, `connecting`, `connect`, `ready`, `close`, `reconnecting`, `end`. */
  readonly status: string;
  /** Replies keep bulk strings as Buffers: bodies stay binary-safe. */
  callBuffer(command: string, ...args: RedisArg[]): Promise<unknown>;
  call(command: string, ...args: RedisArg[]): Promise<unknown>;
  pipeline(): RedisPipeline;
  on(event: string, listener: (...args: any[]) => void): unknown;
  off(event: string, listener: (...args: any[]) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(reconnect?: boolean): void;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface RedisPipeline {
  callBuffer(command: string, ...args: RedisArg[]): RedisPipeline;
  call(command: string, ...args: RedisArg[]): RedisPipeline;
  /** One `[error, reply]` per command, in order. */
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** The subset of ioredis' options this adapter sets. */
export interface RedisClientOptions {
  readonly connectionName: string;
  readonly connectTimeout: number;
  readonly enableOfflineQueue: boolean;
  readonly autoResendUnfulfilledCommands: boolean;
  readonly maxRetriesPerRequest: number | null;
  readonly retryStrategy: (times: number) => number;
  readonly protocol: 2;
  readonly lazyConnect: boolean;
}

export interface RedisDriver {
  readonly Redis: new (url: string, options: RedisClientOptions) => RedisClient;
}

/**
 * Imports ioredis on first use so that applications without Redis need not install it.
 * `importer` exists for tests.
 */
export async function loadIoredis(
  importer: () => Promise<RedisDriver> = () => import('ioredis'),
): Promise<RedisDriver> {
  try {
    return await importer();
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new DriverMissingError('ioredis', { cause: err });
    throw err;
  }
}
