import { z } from 'zod';
import { SuretyError, describeError } from '../../core/errors.js';
import { integerIn, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { loadAmqplib, type AmqpConnection, type AmqpDriver } from './driver.js';
import { passiveDeclare } from './inspect-queue.js';
import {
  fetchQueueNames,
  fetchQueueState,
  fetchServerVersion,
  managementAddress,
  managementTarget,
  missingQueue,
  type ManagementTarget,
} from './management-api.js';
import { deadLetterSettings } from './queue-dead-letters.js';
import { managementUrlsSchema, nodeUrlsSchema } from './node-urls.js';
import { learnQueueSettings, type LearntQueueSettings } from './queue-settings.js';

export interface RabbitMqQueueProbeOptions {
  /** `amqp://user:pass@host:5672/vhost`, or a list, one per cluster node, tried in turn. */
  readonly url: string | readonly string[];
  /**
   * Management API, e.g. `http://user:pass@host:15672` (credentials default to the AMQP URL's), or
   * a list, one per node, tried in turn. With it the probe also reads unacked counts and policies,
   * and can list the vhost's queues (`listQueues`); without it, AMQP alone, which cannot enumerate
   * queues.
   */
  readonly managementUrl?: string | readonly string[];
  /** Connect and HTTP timeout. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Connection name shown by the broker. Default `surety-doctor`. */
  readonly connectionName?: string;
}

const probeSchema = z.object(
  {
    url: nodeUrlsSchema('url'),
    managementUrl: managementUrlsSchema('managementUrl').optional(),
    timeoutMs: integerIn(1, 2_147_483_647).default(5_000),
    connectionName: nonEmptyString().default('surety-doctor'),
  },
  { error: 'must be an object with at least "url"' },
);

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
  const o = parseOptions(probeSchema, options, '');
  const management = o.managementUrl === undefined ? undefined : managementTarget(o.managementUrl, o.url[0]!);
  return new RabbitMqQueueProbe(o.url, management, o.timeoutMs, o.connectionName, driver);
}

class RabbitMqQueueProbe implements BrokerProbe {
  readonly broker = 'rabbitmq';
  readonly address: string;
  private connection: Promise<AmqpConnection> | undefined;
  /** Index of the node that answered last. */
  private answered = 0;
  private readonly learnt = new Map<string, { at: number; settings: LearntQueueSettings }>();
  private serverVersion: Promise<string | null> | undefined;
  /** Only with the management API: AMQP has no way to enumerate queues. */
  readonly listQueues?: () => Promise<string[]>;

  constructor(
    private readonly urls: readonly string[],
    private readonly management: ManagementTarget | undefined,
    private readonly timeoutMs: number,
    private readonly connectionName: string,
    private readonly driver: AmqpDriver | undefined,
  ) {
    this.address = management ? managementAddress(management) : urls.map(withoutCredentials).join(', ');
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

  /** Each node in turn, from the one that answered last; the error names every node that failed. */
  private async open(): Promise<AmqpConnection> {
    const driver = this.driver ?? (await loadAmqplib());
    const failures: string[] = [];
    let failure: unknown;
    for (let i = 0; i < this.urls.length; i++) {
      const index = (this.answered + i) % this.urls.length;
      try {
        const connection = await this.openNode(driver, this.urls[index]!);
        this.answered = index;
        return connection;
      } catch (err) {
        failure = err;
        failures.push(`${withoutCredentials(this.urls[index]!)}: ${describeError(err)}`);
      }
    }
    if (this.urls.length === 1) throw failure;
    throw new SuretyError('SURETY_CONNECTION_LOST', `no node answered (${failures.join('; ')})`, { cause: failure });
  }

  private async openNode(driver: AmqpDriver, url: string): Promise<AmqpConnection> {
    let timer: NodeJS.Timeout | undefined;
    const attempt = driver.connect(url, { clientProperties: { connection_name: this.connectionName } });
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

/** `amqp://host:5672/vhost`: what the doctor shows of a node. */
function withoutCredentials(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
}
