import { z } from 'zod';
import { InvalidOptionError } from '../../core/errors.js';
import { integerIn, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { loadNats, type JetStreamManager, type NatsConnection, type NatsDriver } from './driver.js';
import { isNotFound } from './topology.js';

export interface NatsQueueProbeOptions {
  /** `nats://host:4222`, or a list of servers of one cluster. */
  readonly url: string | readonly string[];
  /** Connect and request timeout. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Connection name shown by the server. Default `surety-doctor`. */
  readonly connectionName?: string;
}

const probeSchema = z.object(
  {
    url: z.union([nonEmptyString(), z.array(nonEmptyString()).min(1)], { error: 'must be a nats:// URL or a list' }),
    timeoutMs: integerIn(1, 2_147_483_647).default(5_000),
    connectionName: nonEmptyString().default('surety-doctor'),
  },
  { error: 'must be an object with at least "url"' },
);

const NS_PER_MS = 1_000_000;

/**
 * A read-only {@link BrokerProbe} for JetStream. A "queue" is a durable consumer, named
 * `<stream>.<consumer>`: `ready` is its num_pending, `unacked` its num_ack_pending, `consumers`
 * its waiting pull requests; `arguments` carries num_redelivered and the settings the doctor
 * checks (num_replicas, storage, ack_wait, duplicate_window).
 * @example
 * const probe = createNatsQueueProbe({ url: 'nats://localhost:4222' });
 * const billing = await probe.inspect('orders.billing'); // { ready: 12, unacked: 3, ... }
 * await probe.close();
 */
export function createNatsQueueProbe(options: NatsQueueProbeOptions, driver?: NatsDriver): BrokerProbe {
  const o = parseOptions(probeSchema, options, '');
  return new NatsQueueProbe(typeof o.url === 'string' ? [o.url] : o.url, o.timeoutMs, o.connectionName, driver);
}

class NatsQueueProbe implements BrokerProbe {
  readonly broker = 'nats';
  readonly address: string;
  private connection: Promise<{ nc: NatsConnection; jsm: JetStreamManager }> | undefined;

  constructor(
    private readonly servers: readonly string[],
    private readonly timeoutMs: number,
    private readonly connectionName: string,
    private readonly driver: NatsDriver | undefined,
  ) {
    this.address = servers.map(withoutCredentials).join(', ');
  }

  async inspect(queue: string): Promise<QueueState> {
    const dot = queue.indexOf('.');
    if (dot <= 0 || dot === queue.length - 1)
      throw new InvalidOptionError('queue', `"${queue}" must be "<stream>.<consumer>"`);
    const [stream, consumer] = [queue.slice(0, dot), queue.slice(dot + 1)];
    const { jsm } = await this.connect();
    const missing = (err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    };
    const streamInfo = await jsm.streams.info(stream).catch(missing);
    const info = streamInfo && (await jsm.consumers.info(stream, consumer).catch(missing));
    if (!streamInfo || !info)
      return {
        name: queue,
        exists: false,
        ready: 0,
        unacked: 0,
        consumers: 0,
        durable: null,
        type: 'jetstream',
        arguments: null,
        source: 'jetstream',
      };
    const maxDeliver = info.config.max_deliver ?? -1;
    return {
      name: queue,
      exists: true,
      ready: info.num_pending,
      unacked: info.num_ack_pending,
      consumers: info.num_waiting,
      durable: Boolean(info.config.durable_name),
      type: 'jetstream',
      arguments: {
        num_redelivered: info.num_redelivered,
        num_replicas: streamInfo.config.num_replicas,
        storage: streamInfo.config.storage,
        ack_policy: info.config.ack_policy,
        ack_wait_ms: Math.round((info.config.ack_wait ?? 0) / NS_PER_MS),
        max_deliver: maxDeliver,
        duplicate_window_ms: Math.round((streamInfo.config.duplicate_window ?? 0) / NS_PER_MS),
      },
      deliveryLimit: maxDeliver > 0 ? maxDeliver : null,
      source: 'jetstream',
    };
  }

  /** Every durable consumer of every stream, as `<stream>.<consumer>`. */
  async listQueues(): Promise<string[]> {
    const { jsm } = await this.connect();
    const names: string[] = [];
    for await (const s of jsm.streams.list()) {
      for await (const c of jsm.consumers.list(s.config.name)) {
        if (c.config.durable_name) names.push(`${s.config.name}.${c.name}`);
      }
    }
    return names.sort();
  }

  async close(): Promise<void> {
    const pending = this.connection;
    this.connection = undefined;
    const open = await pending?.catch(() => undefined);
    await open?.nc.close().catch(() => {});
  }

  private connect(): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
    this.connection ??= this.open().catch((err: unknown) => {
      this.connection = undefined;
      throw err;
    });
    return this.connection;
  }

  private async open(): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
    const driver = this.driver ?? (await loadNats());
    const nc = await driver.connect({
      servers: [...this.servers],
      name: this.connectionName,
      timeout: this.timeoutMs,
      maxReconnectAttempts: 0,
    });
    void nc.closed().then(() => {
      if (this.connection) this.connection = undefined;
    });
    return { nc, jsm: await driver.jetstreamManager(nc, { timeout: this.timeoutMs }) };
  }
}

/** `nats://host:4222`: what the doctor shows of a server. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url.includes('://') ? url : `nats://${url}`);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}
