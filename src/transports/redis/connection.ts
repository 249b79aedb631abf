import { describeError, SuretyError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import type { RedisClient, RedisDriver } from './driver.js';
import type { ResolvedRedisOptions } from './options.js';

/**
 * One ioredis connection and its readiness. Commands never wait in ioredis' offline queue and are
 * never resent after a reconnect: a command the connection lost rejects at once, so a publish is
 * never "buffered", and whoever issued it decides what to do (the relay retries the row). ioredis
 * reconnects in the background with the transport's backoff.
 */
export class RedisConnection {
  readonly client: RedisClient;
  private lastError: unknown;
  private readonly waiters = new Set<(ready: boolean) => void>();
  private readonly readyListeners = new Set<() => void>();
  private closed = false;

  constructor(driver: RedisDriver, options: ResolvedRedisOptions, connectionName: string) {
    this.client = new driver.Redis(options.url, {
      connectionName,
      connectTimeout: options.connectTimeoutMs,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      // 0: a lost connection fails every command it carried instead of holding it for a retry.
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => options.reconnect.delayMs(times),
      protocol: 2,
      lazyConnect: false,
    });
    this.client.on('error', (err: unknown) => {
      this.lastError = err;
      options.logger.debug({ err: redact(describeError(err)), connectionName }, 'redis connection error');
    });
    this.client.on('ready', () => {
      this.lastError = undefined;
      for (const wake of [...this.waiters]) wake(true);
      for (const listener of this.readyListeners) listener();
    });
  }

  isReady(): boolean {
    return !this.closed && this.client.status === 'ready';
  }

  /** True once the connection is ready; false after `timeoutMs` or on close(). */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady() || this.closed) return Promise.resolve(this.isReady());
    return new Promise((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(ready);
      };
      const timer = setTimeout(() => done(this.isReady()), Math.max(0, timeoutMs));
      this.waiters.add(done);
    });
  }

  /** Calls `listener` after every (re)connect; returns the function that stops it. */
  onReady(listener: () => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  /** SURETY_CONNECTION_LOST for `action`, naming the server (without its password) and the last error. */
  notConnected(action: string, url: string): SuretyError {
    const last = this.lastError === undefined ? '' : ` (last error: ${redact(describeError(this.lastError))})`;
    return new SuretyError('SURETY_CONNECTION_LOST', `${action}: no connection to Redis at ${redact(url)}${last}`);
  }

  /** Ends the connection at once: commands still in flight reject. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const wake of [...this.waiters]) wake(false);
    this.readyListeners.clear();
    this.client.disconnect(false);
  }
}
