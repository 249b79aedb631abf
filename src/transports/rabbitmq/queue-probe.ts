import { InvalidOptionError, SuretyError } from '../../core/errors.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { loadAmqplib, type AmqpConnection, type AmqpDriver } from './driver.js';
import { passiveDeclare } from './inspect-queue.js';
import {
  fetchQueueNames,
  fetchQueueState,
  fetchServerVersion,
  managementTarget,
  missingQueue,
  type ManagementTarget,
} from './management-api.js';
import { deadLetterSettings } from './queue-dead-letters.js';
import { learnQueueSettings, type LearntQueueSettings } from './queue-settings.js';

export interface RabbitMqQueueProbeOptions {
  /** `amqp://user:pass@host:5672/vhost`. */
  readonly url: string;
  /**
   * Management API, e.g. `http://user:pass@host:15672` (credentials default to the AMQP URL's).
   * With it the probe also reads unacked counts and policies, and can list the vhost's queues
   * (`listQueues`); without it, AMQP alone, which cannot enumerate queues.
   */
  readonly managementUrl?: string;
  /** Connect and HTTP timeout. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Connection name shown by the broker. Default `surety-doctor`. */
  readonly connectionName?: string;
}

const SETTINGS_TTL_MS = 60_000;

/**
 * A read-only {@link BrokerProbe} for RabbitMQ. Without the management API it uses a passive
 * declare (ready messages and consumers) on a channel of its own, since a missing queue closes the
 * channel, then learns durability and arguments by no-op re-declares (see `learnQueueSettings`).
 * With `managementUrl` it reads each queue from the management API instead, and `listQueues` names
 * the vhost's queues.
 * @example
 * const probe = createRabbitMqQueueProbe({ url: 'amqp://localhost' });
 * const billing = await probe.inspect('billing'); // { ready: 12, consumers: 0, durable: true, ... }
 * await probe.close();
 */
export function createRabbitMqQueueProbe(options: RabbitMqQueueProbeOptions, driver?: AmqpDriver): BrokerProbe {
  const url = options?.url;
  if (typeof url !== 'string' || !/^amqps?:\/\//.test(url))
    throw new InvalidOptionError('url', 'must start with "amqp://" or "amqps://"');
  const timeoutMs = options.timeoutMs ?? 5_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new InvalidOptionError('timeoutMs', 'must be a positive integer');
  let management: ManagementTarget | undefined;
  if (options.managementUrl !== undefined) {
    if (!/^https?:\/\//.test(options.managementUrl))
      throw new InvalidOptionError('managementUrl', 'must start with "http://" or "https://"');
    management = managementTarget(options.managementUrl, url);
  }
  return new RabbitMqQueueProbe(url, management, timeoutMs, options.connectionName ?? 'surety-doctor', driver);
}

class RabbitMqQueueProbe implements BrokerProbe {
  readonly broker = 'rabbitmq';
  readonly address: string;
  private connection: Promise<AmqpConnection> | undefined;
  private readonly learnt = new Map<string, { at: number; settings: LearntQueueSettings }>();
  private serverVersion: Promise<string | null> | undefined;
  /** Only with the management API: AMQP has no way to enumerate queues. */
  readonly listQueues?: () => Promise<string[]>;

  constructor(
    private readonly url: string,
    private readonly management: ManagementTarget | undefined,
    private readonly timeoutMs: number,
    private readonly connectionName: string,
    private readonly driver: AmqpDriver | undefined,
  ) {
    const u = new URL(url);
    this.address = management ? management.base : `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
    if (management) this.listQueues = () => fetchQueueNames(management, timeoutMs);
  }

  async inspect(queue: string): Promise<QueueState> {
    if (this.management) {
      this.serverVersion ??= fetchServerVersion(this.management, this.timeoutMs);
      return fetchQueueState(this.management, queue, this.timeoutMs, await this.serverVersion);
    }
    const connection = await this.connect();
    const counts = await passiveDeclare(connection, queue);
    if (!counts) return missingQueue(queue, 'amqp');
    const learnt = await this.settings(connection, queue);
    const type = learnt.arguments ? String(learnt.arguments['x-queue-type'] ?? 'classic') : null;
    const version = connection.connection?.serverProperties?.version;
    return {
      name: queue,
      exists: true,
      ready: counts.messageCount,
      unacked: null,
      consumers: counts.consumerCount,
      durable: learnt.durable,
      type,
      arguments: learnt.arguments,
      // A policy's settings are invisible over AMQP: only the queue's arguments and the broker's version count.
      ...deadLetterSettings({
        name: queue,
        type,
        arguments: learnt.arguments,
        serverVersion: typeof version === 'string' ? version : null,
      }),
      source: 'amqp',
    };
  }

  /**
   * Settings change rarely, and every refused re-declare leaves a channel error in the broker's
   * log, so they are learnt once a minute per queue, not on every inspection.
   */
  private async settings(connection: AmqpConnection, queue: string): Promise<LearntQueueSettings> {
    const cached = this.learnt.get(queue);
    if (cached && Date.now() - cached.at < SETTINGS_TTL_MS) return cached.settings;
    const settings = await learnQueueSettings(connection, queue);
    if (settings.arguments) this.learnt.set(queue, { at: Date.now(), settings });
    return settings;
  }

  async close(): Promise<void> {
    const pending = this.connection;
    this.connection = undefined;
    const connection = await pending?.catch(() => undefined);
    await connection?.close().catch(() => {});
  }

  private connect(): Promise<AmqpConnection> {
    this.connection ??= this.open().catch((err: unknown) => {
      this.connection = undefined;
      throw err;
    });
    return this.connection;
  }

  private async open(): Promise<AmqpConnection> {
    const driver = this.driver ?? (await loadAmqplib());
    let timer: NodeJS.Timeout | undefined;
    const attempt = driver.connect(this.url, { clientProperties: { connection_name: this.connectionName } });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new SuretyError('SURETY_CONNECTION_LOST', `no connection within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      const connection = await Promise.race([attempt, timeout]);
      // Without an 'error' listener an EventEmitter throws; a lost connection is re-opened next time.
      connection.on('error', () => {});
      connection.on('close', () => {
        if (this.connection) this.connection = undefined;
      });
      return connection;
    } catch (err) {
      void attempt.then((c) => c.close()).catch(() => {}); // a late connection must not linger
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}
