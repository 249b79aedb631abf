import { z } from 'zod';
import { integerIn, nonEmptyString, stringOption } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import { redact } from '../../core/redact.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { loadIoredis, type RedisClient, type RedisDriver } from './driver.js';
import { infoRecord } from './stream-replies.js';
import { trimWarnings, type GroupFigures, type StreamFigures } from './trim-risk.js';

export interface RedisStreamProbeOptions {
  /** `redis://[user:password@]host:6379[/db]`. */
  readonly url: string;
  /** `listQueues` names the groups of the streams whose name starts with this. Default `surety:`. */
  readonly prefix?: string;
  /** The publishers' `maxLen`, if any: a stream near it while a group has pending entries or lag is a warning. */
  readonly maxLen?: number;
  /** The publishers' `maxAgeMs`, if any: entries near that age still pending or unread are a warning. */
  readonly maxAgeMs?: number;
  /** A consumer that has not tried to read for this long is not counted as live. Default 60000. */
  readonly consumerIdleMs?: number;
  /** Connect and command timeout. Default 5000. */
  readonly timeoutMs?: number;
  /** `CLIENT SETNAME` of the probe's connection. Default `surety-doctor`. */
  readonly connectionName?: string;
}

const probeSchema = z.object(
  {
    url: nonEmptyString().regex(/^rediss?:\/\//, { error: 'must be a redis:// or rediss:// URL' }),
    prefix: stringOption().default('surety:'),
    maxLen: integerIn(1).optional(),
    maxAgeMs: integerIn(1).optional(),
    consumerIdleMs: integerIn(1).default(60_000),
    timeoutMs: integerIn(1, 2_147_483_647).default(5_000),
    connectionName: nonEmptyString().default('surety-doctor'),
  },
  { error: 'must be an object with at least "url"' },
);

/**
 * The probe's name for one consumer group on one stream, `<stream>@<group>`.
 * @example
 * redisQueueName('surety:order.created', 'billing'); // 'surety:order.created@billing'
 */
export function redisQueueName(stream: string, group: string): string {
  return `${stream}@${group}`;
}

/**
 * A read-only {@link BrokerProbe} for Redis Streams, on a connection of its own. A queue is a
 * consumer group on a stream, `<stream>@<group>` (split at the last `@`): `ready` is the group's
 * lag (entries not yet read by it, Redis 7), `unacked` its pending entries, `consumers` those that
 * tried to read within `consumerIdleMs`. `durable` says whether the server writes an append-only
 * file. `warnings` flag trimming that could drop, or has dropped, entries the group has not acked.
 * @example
 * const probe = createRedisStreamProbe({ url: 'redis://localhost:6379', maxLen: 1_000_000 });
 * await probe.inspect('surety:order.created@billing'); // { ready: 12, unacked: 3, consumers: 2, ... }
 * await probe.listQueues(); // ['surety:order.created@billing']
 * await probe.close();
 */
export function createRedisStreamProbe(options: RedisStreamProbeOptions, driver?: RedisDriver): BrokerProbe {
  return new RedisStreamProbe(parseOptions(probeSchema, options, ''), driver);
}

type ProbeConfig = Readonly<z.output<typeof probeSchema>>;

class RedisStreamProbe implements BrokerProbe {
  readonly broker = 'redis';
  readonly address: string;
  private client: Promise<RedisClient> | undefined;

  constructor(
    private readonly config: ProbeConfig,
    private readonly driver: RedisDriver | undefined,
  ) {
    this.address = redact(config.url);
  }

  async inspect(queue: string): Promise<QueueState> {
    const at = queue.lastIndexOf('@');
    const [stream, group] = at > 0 ? [queue.slice(0, at), queue.slice(at + 1)] : [queue, ''];
    const client = await this.connect();
    const streamInfo = await client.call('XINFO', 'STREAM', stream).catch((err: unknown) => {
      if ((err as { name?: unknown }).name === 'ReplyError') return null; // no such key
      throw err;
    });
    const durable = await this.appendOnly(client);
    const base = { name: queue, type: 'stream', durable, source: 'redis' as const };
    if (streamInfo === null) return missing(base);
    const info = infoRecord(streamInfo);
    const groups = (await client.call('XINFO', 'GROUPS', stream)) as unknown[];
    const record = groups.map(infoRecord).find((g) => g['name'] === group);
    if (!record) return missing(base);
    const consumers = ((await client.call('XINFO', 'CONSUMERS', stream, group)) as unknown[]).map(infoRecord);
    const live = consumers.filter((c) => Number(c['idle']) < this.config.consumerIdleMs).length;
    const summary = (await client.call('XPENDING', stream, group)) as unknown[];
    const figures: StreamFigures = {
      length: Number(info['length']),
      firstEntryId: firstEntryId(info['first-entry']),
      entriesAdded: optionalNumber(info['entries-added']),
    };
    const groupFigures: GroupFigures = {
      pending: Number(record['pending']),
      lag: optionalNumber(record['lag']),
      lastDeliveredId: String(record['last-delivered-id']),
      oldestPendingId: typeof summary[1] === 'string' ? summary[1] : null,
    };
    const warnings = trimWarnings(stream, group, figures, groupFigures, this.config, Date.now());
    return {
      ...base,
      exists: true,
      ready: groupFigures.lag ?? 0,
      unacked: groupFigures.pending,
      consumers: live,
      arguments: {
        length: figures.length,
        'entries-added': figures.entriesAdded,
        'first-entry-id': figures.firstEntryId,
        'last-delivered-id': groupFigures.lastDeliveredId,
        'entries-read': optionalNumber(record['entries-read']),
        lag: groupFigures.lag,
        'oldest-pending-id': groupFigures.oldestPendingId,
        'consumers-registered': consumers.length,
      },
      warnings,
    };
  }

  /** Every `<stream>@<group>` of the streams under `prefix`. */
  async listQueues(): Promise<string[]> {
    const client = await this.connect();
    const names: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = (await client.call(
        'SCAN',
        cursor,
        'MATCH',
        `${escapeGlob(this.config.prefix)}*`,
        'TYPE',
        'stream',
        'COUNT',
        1_000,
      )) as [string, string[]];
      cursor = next;
      for (const stream of keys) {
        const groups = (await client.call('XINFO', 'GROUPS', stream)) as unknown[];
        for (const g of groups) names.push(redisQueueName(stream, String(infoRecord(g)['name'])));
      }
    } while (cursor !== '0');
    return names.sort();
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) (await client.catch(() => undefined))?.disconnect(false);
  }

  /** Null when the server will not say (CONFIG is often disabled on managed Redis). */
  private async appendOnly(client: RedisClient): Promise<boolean | null> {
    try {
      const reply = (await client.call('CONFIG', 'GET', 'appendonly')) as string[];
      return reply[1] === undefined ? null : reply[1] === 'yes';
    } catch {
      return null;
    }
  }

  private connect(): Promise<RedisClient> {
    this.client ??= this.open();
    return this.client;
  }

  private async open(): Promise<RedisClient> {
    const driver = this.driver ?? (await loadIoredis());
    const { timeoutMs } = this.config;
    const client = new driver.Redis(this.config.url, {
      connectionName: this.config.connectionName,
      connectTimeout: timeoutMs,
      enableOfflineQueue: true, // the first command waits for the connection...
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 1, // ...and a refused connection fails it instead of retrying for ever
      retryStrategy: () => Math.min(timeoutMs, 500),
      protocol: 2,
      lazyConnect: false,
    });
    client.on('error', () => {}); // surfaced by the command that fails
    return client;
  }
}

function missing(base: Pick<QueueState, 'name' | 'type' | 'durable' | 'source'>): QueueState {
  return { ...base, exists: false, ready: 0, unacked: 0, consumers: 0, arguments: null };
}

function firstEntryId(entry: unknown): string | null {
  return Array.isArray(entry) && typeof entry[0] === 'string' ? entry[0] : null;
}

function optionalNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
