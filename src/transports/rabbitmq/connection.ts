import { describeError, SuretyError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import type { AmqpConnection, AmqpDriver } from './driver.js';
import { NodeRotation } from './node-rotation.js';
import { describeNode } from './node-urls.js';
import type { ResolvedRabbitMqOptions } from './options.js';
import { cancellableSleep, type CancellableSleep } from './sleep.js';
import { declareResolvedTopology } from './topology.js';

type ConnectedListener = (connection: AmqpConnection) => void;
type BlockedListener = (blocked: boolean) => void;
type LostListener = () => void;

/**
 * Owns the one AMQP connection: opens it to one of the cluster's nodes, declares the topology, and
 * after any loss reconnects in the background, to the next node at once and with capped
 * exponential backoff once every node failed (see NodeRotation). Channel owners (publisher,
 * subscriptions) hear about each new connection and open their own channels on it.
 */
export class ConnectionManager {
  private connection: AmqpConnection | undefined;
  /** The node of `connection`, and when it opened. */
  private node = { url: '', since: 0 };
  private readonly nodes: NodeRotation;
  private closed = false;
  private connecting: Promise<void> | undefined;
  private pendingSleep: CancellableSleep | undefined;
  private readonly lost = new WeakSet<AmqpConnection>();
  private readonly connectedListeners = new Set<ConnectedListener>();
  private readonly blockedListeners = new Set<BlockedListener>();
  private readonly lostListeners = new Set<LostListener>();
  /** Callers of waitForConnection(), each ended by a connection, its timeout or close(). */
  private readonly waiters = new Set<(connection: AmqpConnection | undefined) => void>();
  private lastError: unknown;

  constructor(
    private readonly driver: AmqpDriver,
    private readonly options: ResolvedRabbitMqOptions,
  ) {
    this.nodes = new NodeRotation(options.urls, options.nodeOrder);
  }

  /** The open connection, if any. */
  get current(): AmqpConnection | undefined {
    return this.connection;
  }

  /** Why the last attempt to connect (or to declare the topology) failed; undefined once connected. */
  get lastConnectError(): unknown {
    return this.lastError;
  }

  start(): void {
    this.reconnect();
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

  /**
   * SURETY_CONNECTION_LOST for `action` after waiting `waitedMs` for a connection: where to (the
   * nodes, without passwords) and the last connect error.
   */
  notConnected(action: string, waitedMs: number): SuretyError {
    const last = this.lastError === undefined ? '' : ` (last error: ${redact(describeError(this.lastError))})`;
    const where = this.options.urls.map(describeNode).join(', ');
    return new SuretyError(
      'SURETY_CONNECTION_LOST',
      `${action}: no connection to RabbitMQ at ${where} within ${waitedMs} ms${last}`,
      { cause: this.lastError },
    );
  }

  /** Calls `listener` whenever the open connection is lost (not on close()). Returns an unsubscribe. */
  onLost(listener: LostListener): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Calls `listener` with every new connection (topology already declared). Returns an unsubscribe. */
  onConnected(listener: ConnectedListener): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
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

  private reconnect(): void {
    this.connecting ??= this.connectLoop().finally(() => (this.connecting = undefined));
  }

  private async connectLoop(): Promise<void> {
    const log = this.options.logger;
    while (!this.closed) {
      const { url, backoffAttempt } = this.nodes.next();
      if (backoffAttempt > 0) {
        this.pendingSleep = cancellableSleep(this.options.reconnect.delayMs(backoffAttempt));
        const slept = await this.pendingSleep.done;
        this.pendingSleep = undefined;
        if (!slept) return;
      }
      const connection = await this.tryConnect(url);
      if (!connection || this.lost.has(connection)) continue;
      if (this.closed) {
        await connection.close().catch(() => {});
        return;
      }
      this.connection = connection;
      this.lastError = undefined;
      this.node = { url, since: Date.now() };
      log.info({ connection: this.options.connectionName, node: describeNode(url) }, 'rabbitmq connected');
      for (const listener of this.connectedListeners) listener(connection);
      for (const done of [...this.waiters]) done(connection);
      return;
    }
  }

  private async tryConnect(url: string): Promise<AmqpConnection | undefined> {
    const log = this.options.logger;
    const node = describeNode(url);
    let connection: AmqpConnection;
    try {
      connection = await this.driver.connect(url, {
        clientProperties: { connection_name: this.options.connectionName },
        timeout: this.options.connectTimeoutMs,
      });
    } catch (err) {
      this.lastError = err;
      log.warn({ err: describeError(err), node }, 'rabbitmq connect failed; retrying');
      return undefined;
    }
    // Without an 'error' listener an EventEmitter throws, which would crash the process.
    connection.on('error', (err: unknown) => log.warn({ err: describeError(err), node }, 'rabbitmq connection error'));
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
      log.error({ err: describeError(err), node }, 'rabbitmq topology declaration failed; retrying');
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
    this.nodes.lost(Date.now() - this.node.since);
    for (const listener of this.lostListeners) listener();
    this.options.logger.warn(
      { connection: this.options.connectionName, node: describeNode(this.node.url) },
      'rabbitmq connection lost; reconnecting',
    );
    this.reconnect();
  }

  private emitBlocked(blocked: boolean, reason: unknown): void {
    if (blocked) this.options.logger.warn({ reason: String(reason) }, 'rabbitmq blocked publishing (resource alarm)');
    for (const listener of this.blockedListeners) listener(blocked);
  }
}
