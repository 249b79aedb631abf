import { describeError, SuretyError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import type { AmqpConnection, AmqpDriver } from './driver.js';
import type { ResolvedRabbitMqOptions } from './options.js';
import { cancellableSleep, type CancellableSleep } from './sleep.js';
import { declareResolvedTopology } from './topology.js';

type ConnectedListener = (connection: AmqpConnection) => void;
type LostListener = () => void;
type BlockedListener = (blocked: boolean) => void;

/**
 * Owns the one AMQP connection: opens it, declares the topology, and after any loss reconnects in
 * the background with capped exponential backoff. Channel owners (publisher, subscriptions) hear
 * about each new connection and open their own channels on it.
 */
export class ConnectionManager {
  private connection: AmqpConnection | undefined;
  private closed = false;
  private connecting: Promise<void> | undefined;
  private pendingSleep: CancellableSleep | undefined;
  private readonly lost = new WeakSet<AmqpConnection>();
  private readonly connectedListeners = new Set<ConnectedListener>();
  private readonly lostListeners = new Set<LostListener>();
  private readonly blockedListeners = new Set<BlockedListener>();
  /** Callers of waitForConnection(), each ended by a connection, its timeout or close(). */
  private readonly waiters = new Set<(connection: AmqpConnection | undefined) => void>();
  private lastError: unknown;

  constructor(
    private readonly driver: AmqpDriver,
    private readonly options: ResolvedRabbitMqOptions,
  ) {}

  /** The open connection, if any. */
  get current(): AmqpConnection | undefined {
    return this.connection;
  }

  /** Why the last attempt to connect (or to declare the topology) failed; undefined once connected. */
  get lastConnectError(): unknown {
    return this.lastError;
  }

  start(): void {
    this.reconnect(false);
  }

  /** The connection (topology declared) as soon as there is one; undefined after `timeoutMs` or on close(). */
  waitForConnection(timeoutMs: number): Promise<AmqpConnection | undefined> {
    if (this.connection || this.closed) return Promise.resolve(this.connection);
    return new Promise((resolve) => {
      const done = (connection: AmqpConnection | undefined): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(connection);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.waiters.add(done);
    });
  }

  /** Calls `listener` with every new connection (topology already declared). Returns an unsubscribe. */
  onConnected(listener: ConnectedListener): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  /**
   * SURETY_CONNECTION_LOST for `action` after waiting `waitedMs` for a connection: where to (the URL
   * without its password) and the last connect error.
   */
  notConnected(action: string, waitedMs: number): SuretyError {
    const last = this.lastError === undefined ? '' : ` (last error: ${redact(describeError(this.lastError))})`;
    return new SuretyError(
      'SURETY_CONNECTION_LOST',
      `${action}: no connection to RabbitMQ at ${redact(this.options.url)} within ${waitedMs} ms${last}`,
      { cause: this.lastError },
    );
  }

  /** Calls `listener` whenever the open connection is lost (not on close()). Returns an unsubscribe. */
  onLost(listener: LostListener): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** RabbitMQ blocks publishing connections during a memory or disk alarm. */
  onBlocked(listener: BlockedListener): () => void {
    this.blockedListeners.add(listener);
    return () => this.blockedListeners.delete(listener);
  }

  /** Stops reconnecting and closes the connection; an attempt in progress gets `closeTimeoutMs` to finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pendingSleep?.cancel();
    for (const done of [...this.waiters]) done(undefined);
    if (this.connecting) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise((resolve) => (timer = setTimeout(resolve, this.options.closeTimeoutMs)));
      await Promise.race([this.connecting, deadline]);
      clearTimeout(timer);
    }
    const connection = this.connection;
    this.connection = undefined;
    if (connection) await connection.close().catch(() => {});
  }

  private reconnect(afterLoss: boolean): void {
    this.connecting ??= this.connectLoop(afterLoss).finally(() => (this.connecting = undefined));
  }

  private async connectLoop(afterLoss: boolean): Promise<void> {
    const log = this.options.logger;
    // After a loss, wait a little first: a broker that drops us at once must not be hammered.
    let attempt = afterLoss ? 1 : 0;
    while (!this.closed) {
      if (attempt > 0) {
        this.pendingSleep = cancellableSleep(this.options.reconnect.delayMs(attempt));
        const slept = await this.pendingSleep.done;
        this.pendingSleep = undefined;
        if (!slept) return;
      }
      attempt++;
      const connection = await this.tryConnect();
      if (!connection || this.lost.has(connection)) continue;
      if (this.closed) {
        await connection.close().catch(() => {});
        return;
      }
      this.connection = connection;
      this.lastError = undefined;
      log.info({ connection: this.options.connectionName }, 'rabbitmq connected');
      for (const listener of this.connectedListeners) listener(connection);
      for (const done of [...this.waiters]) done(connection);
      return;
    }
  }

  private async tryConnect(): Promise<AmqpConnection | undefined> {
    const log = this.options.logger;
    let connection: AmqpConnection;
    try {
      connection = await this.driver.connect(this.options.url, {
        clientProperties: { connection_name: this.options.connectionName },
      });
    } catch (err) {
      this.lastError = err;
      log.warn({ err: describeError(err) }, 'rabbitmq connect failed; retrying');
      return undefined;
    }
    // Without an 'error' listener an EventEmitter throws, which would crash the process.
    connection.on('error', (err: unknown) => log.warn({ err: describeError(err) }, 'rabbitmq connection error'));
    connection.on('close', () => this.handleClose(connection));
    connection.on('blocked', (reason: unknown) => this.emitBlocked(true, reason));
    connection.on('unblocked', () => this.emitBlocked(false, undefined));
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => {}); // a declaration failure rejects the call below; that is reported
      await declareResolvedTopology(channel, this.options.topology);
      await channel.close();
    } catch (err) {
      this.lastError = err;
      log.error({ err: describeError(err) }, 'rabbitmq topology declaration failed; retrying');
      await connection.close().catch(() => {});
      return undefined;
    }
    return connection;
  }

  private handleClose(connection: AmqpConnection): void {
    this.lost.add(connection);
    if (this.connection !== connection) return;
    this.connection = undefined;
    this.emitBlocked(false, undefined);
    if (this.closed) return;
    for (const listener of this.lostListeners) listener();
    this.options.logger.warn({ connection: this.options.connectionName }, 'rabbitmq connection lost; reconnecting');
    this.reconnect(true);
  }

  private emitBlocked(blocked: boolean, reason: unknown): void {
    if (blocked) this.options.logger.warn({ reason: String(reason) }, 'rabbitmq blocked publishing (resource alarm)');
    for (const listener of this.blockedListeners) listener(blocked);
  }
}
