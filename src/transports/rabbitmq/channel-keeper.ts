import { describeError } from '../../core/errors.js';
import type { AmqpChannel, AmqpConnection } from './driver.js';
import type { ConnectionManager } from './connection.js';
import type { ResolvedRabbitMqOptions } from './options.js';
import { cancellableSleep, type CancellableSleep } from './sleep.js';

/** What a channel owner (publisher, subscription) does at each stage of its channel's life. */
export interface ChannelHooks<S> {
  readonly label: string;
  create(connection: AmqpConnection): Promise<AmqpChannel>;
  /** Prepares a fresh channel (listeners, prefetch, consume) and returns the owner's state for it. */
  setup(channel: AmqpChannel): Promise<S>;
  opened(channel: AmqpChannel, state: S): void;
  /**
   * The channel closed (its connection too, perhaps); it will be replaced, at once when this returns
   * true (the broker closed it over one operation, which must not wait out a backoff), else after one.
   */
  lost(channel: AmqpChannel, state: S): boolean | void;
  /** Runs in `stop()` before the channel is closed. */
  beforeClose?(channel: AmqpChannel, state: S): Promise<void>;
}

/**
 * Keeps one channel open for its owner: opened on every new connection, and re-opened with
 * backoff when the broker closes just the channel (e.g. after a 404 on a publish).
 */
export class ChannelKeeper<S> {
  private active: { readonly channel: AmqpChannel; readonly state: S } | undefined;
  private opening = false;
  private stopped = false;
  private retry: CancellableSleep | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly manager: ConnectionManager,
    private readonly options: ResolvedRabbitMqOptions,
    private readonly hooks: ChannelHooks<S>,
  ) {}

  get current(): { readonly channel: AmqpChannel; readonly state: S } | undefined {
    return this.active;
  }

  /** Keeps the channel open from now on, in the background. */
  run(): void {
    if (this.stopped) return;
    this.unsubscribe ??= this.manager.onConnected(() => void this.ensureOpen(1));
    void this.ensureOpen(1);
  }

  /** Opens the channel on the current connection now; throws when that fails. */
  async openNow(): Promise<void> {
    const connection = this.manager.current;
    if (!connection) throw new Error('not connected');
    this.opening = true;
    try {
      await this.open(connection);
    } finally {
      this.opening = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.retry?.cancel();
    const active = this.active;
    if (!active) return;
    try {
      await this.hooks.beforeClose?.(active.channel, active.state);
    } finally {
      this.active = undefined;
      await active.channel.close().catch(() => {});
    }
  }

  private async ensureOpen(attempt: number): Promise<void> {
    if (this.stopped || this.active || this.opening) return;
    const connection = this.manager.current;
    if (!connection) return; // the next connection will call again
    this.opening = true;
    try {
      await this.open(connection);
      return;
    } catch (err) {
      this.options.logger.warn(
        { err: describeError(err), channel: this.hooks.label },
        'rabbitmq channel setup failed; retrying',
      );
    } finally {
      this.opening = false;
    }
    // A new connection may have come while this attempt failed on the old one: use it at once.
    if (this.manager.current && this.manager.current !== connection) void this.ensureOpen(1);
    else this.retryLater(attempt + 1);
  }

  private retryLater(attempt: number): void {
    if (this.stopped) return;
    this.retry?.cancel();
    const sleep = (this.retry = cancellableSleep(this.options.reconnect.delayMs(attempt)));
    void sleep.done.then((completed) => {
      if (completed) void this.ensureOpen(attempt);
    });
  }

  private async open(connection: AmqpConnection): Promise<void> {
    const log = this.options.logger;
    const channel = await this.hooks.create(connection);
    let closed = false;
    // Without an 'error' listener an EventEmitter throws, which would crash the process.
    channel.on('error', (err: unknown) =>
      log.warn({ err: describeError(err), channel: this.hooks.label }, 'rabbitmq channel error'),
    );
    channel.on('close', () => {
      closed = true;
      const active = this.active;
      if (active?.channel !== channel) return;
      this.active = undefined;
      if (this.hooks.lost(channel, active.state) === true) void this.ensureOpen(1);
      else this.retryLater(1);
    });
    let state: S;
    try {
      state = await this.hooks.setup(channel);
      if (closed) throw new Error('channel closed during setup');
    } catch (err) {
      await channel.close().catch(() => {});
      throw err;
    }
    if (this.stopped) {
      await channel.close().catch(() => {});
      return;
    }
    this.active = { channel, state };
    this.hooks.opened(channel, state);
  }
}
