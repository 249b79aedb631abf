import { SuretyError, describeError } from '../../core/errors.js';
import type { JetStreamClient, JetStreamManager, NatsConnection, NatsDriver } from './driver.js';
import type { ResolvedNatsOptions } from './options.js';
import { declareTopology } from './topology.js';

/** An open connection with its JetStream handles. */
export interface NatsSession {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
}

/**
 * Owns the one NATS connection of a transport. The client reconnects by itself, forever; this
 * follows its status events so that `ready` is true only while connected with the topology
 * declared, and tells listeners of every loss, so that publishes in flight are not left hanging.
 */
export class NatsConnectionManager {
  private session: NatsSession | undefined;
  private connected = false;
  private closed = false;
  private opening: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryWake: (() => void) | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly lostListeners = new Set<() => void>();

  constructor(
    private readonly driver: NatsDriver,
    private readonly options: ResolvedNatsOptions,
  ) {}

  /** Connects in the background; `waitUntilReady` tells when it is done. */
  start(): void {
    this.opening = this.open().catch((err: unknown) => {
      if (!this.closed) this.options.logger.error({ err: describeError(err) }, 'nats connection failed for good');
    });
  }

  get ready(): boolean {
    return this.connected && !this.closed;
  }

  /** The session while ready, else undefined. */
  get current(): NatsSession | undefined {
    return this.ready ? this.session : undefined;
  }

  /** Resolves true once ready, false after `timeoutMs` or on close. */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(this.ready);
      };
      const timer = setTimeout(wake, Math.max(0, timeoutMs));
      this.waiters.add(wake);
    });
  }

  /** `listener` runs on every disconnect; returns the function that removes it. */
  onLost(listener: () => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  notReady(what: string, waitedMs: number): SuretyError {
    return new SuretyError(
      'SURETY_CONNECTION_LOST',
      `${what}: no NATS connection within ${waitedMs} ms (${this.options.servers.join(', ')})`,
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.setConnected(false);
    clearTimeout(this.retryTimer);
    this.retryWake?.();
    await this.opening;
    await this.session?.nc.close().catch(() => {});
  }

  /**
   * Until a first connection, each attempt is a connect of its own (not the client's
   * waitOnFirstConnect), so that close() can end the retrying; from then on the client reconnects.
   */
  private async open(): Promise<void> {
    const { servers, connectionName, reconnectWaitMs } = this.options;
    let nc: NatsConnection | undefined;
    while (!nc) {
      try {
        nc = await this.driver.connect({
          servers: [...servers],
          name: connectionName,
          maxReconnectAttempts: -1,
          reconnectTimeWait: reconnectWaitMs,
        });
      } catch (err) {
        if (this.closed) return;
        this.options.logger.warn({ err: describeError(err), servers }, 'nats not reachable yet; retrying');
        await new Promise<void>((resolve) => {
          this.retryWake = resolve;
          this.retryTimer = setTimeout(resolve, reconnectWaitMs);
        });
        if (this.closed) return;
      }
    }
    if (this.closed) {
      await nc.close().catch(() => {});
      return;
    }
    const timeout = this.options.publishTimeoutMs;
    this.session = {
      nc,
      js: this.driver.jetstream(nc, { timeout }),
      jsm: await this.driver.jetstreamManager(nc, { timeout }),
    };
    void this.followStatus(nc);
    await this.declared();
  }

  private async followStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.closed) return;
      if (status.type === 'disconnect') {
        this.options.logger.warn({ server: status.server }, 'nats connection lost; the client reconnects');
        this.setConnected(false);
      } else if (status.type === 'reconnect') {
        this.options.logger.info({ server: status.server }, 'nats reconnected');
        await this.declared();
      }
    }
  }

  /** Ready once the topology is declared; a refusal is logged and retried on the next reconnect. */
  private async declared(): Promise<void> {
    const session = this.session!;
    try {
      if (this.options.topology.streams.length > 0) await declareTopology(session.jsm, this.options.topology);
      this.setConnected(!session.nc.isClosed());
    } catch (err) {
      this.options.logger.error({ err: describeError(err) }, 'nats topology declaration failed');
      if (!session.nc.isClosed()) this.setConnected(true); // publishing to existing streams still works
    }
  }

  private setConnected(value: boolean): void {
    const was = this.connected;
    this.connected = value;
    if (was && !value) for (const lost of [...this.lostListeners]) lost();
    if (value) for (const wake of [...this.waiters]) wake();
    if (this.closed) for (const wake of [...this.waiters]) wake();
  }
}
