import { InvalidMessageError, InvalidOptionError, PublishError, SuretyError } from '../../core/errors.js';
import type { OutgoingMessage, SubscribeOptions, Subscription, Transport } from '../../ports/transport.js';
import { signalCommit } from './commit-signal.js';
import type { EmbeddedDelivery } from './delivery.js';
import { DeliveryCounts } from './delivery-counts.js';
import { sqliteErrorCode } from './driver.js';
import { LogStore } from './log-store.js';
import { LogSubscription } from './log-subscription.js';
import { openLog } from './open-log.js';
import {
  parseEmbeddedOptions,
  parsePurgeOptions,
  parseSubscribeOptions,
  type EmbeddedTransportOptions,
} from './options.js';
import { PublishBatcher } from './publish-batcher.js';
import { logTables, type LogTables } from './sql.js';

/** The embedded transport: a {@link Transport} plus log administration. */
export interface EmbeddedTransport extends Transport {
  readonly name: 'embedded';
  readonly settlement: 'checkpoint';
  /** Absolute path of the database file, or `':memory:'`. */
  readonly location: string;
  readonly tables: LogTables;
  subscribe(options: SubscribeOptions, handler: (delivery: EmbeddedDelivery) => Promise<void>): Promise<Subscription>;
  /** The group's committed offset on `topic`: deliveries resume after it. 0 when the group has none. */
  committedOffset(group: string, topic: string): Promise<number>;
  /**
   * Deletes log rows that every group with a checkpoint on their topic has committed past, in
   * batches of `batchSize`. Returns how many rows were deleted. A group that has never committed on
   * a topic is not waited for: when it first subscribes it starts at the oldest row left.
   */
  purgeCommitted(options?: { batchSize?: number }): Promise<number>;
}

/**
 * A durable log in a SQLite file, with consumer groups and committed offsets, so that a whole
 * pipeline runs on one machine without a broker. Several processes may open the same file, on a
 * local disk (WAL needs shared memory, so not a network file system).
 *
 * - `publish` resolves once the row is committed (group commit: publishes of one event-loop turn
 *   share a transaction). SQLite has no routing: every topic is accepted, nothing is unroutable.
 * - `subscribe` delivers each topic's rows after the group's committed offset, in offset order, at
 *   most `prefetch` unsettled at once. `ack` commits up to the lowest offset not yet acked, so a crash
 *   redelivers everything uncommitted. `retry` re-queues the message behind those already read.
 *   `redeliveries` counts this transport's earlier deliveries of the offset (a new process starts at 0).
 * - One subscriber per (group, topic) consumes at a time, guarded by a lease row; other subscribers
 *   of the group, in this process or another, stand by and take over when it closes or, after a
 *   crash, when its lease expires (`leaseTtlMs`).
 *
 * @example
 * ```ts
 * const transport = createEmbeddedTransport({ path: '.data/surety.sqlite' });
 * await transport.publish({ topic: 'order.created', message: encodeEnvelope(envelope) });
 * const subscription = await transport.subscribe({ group: 'billing', topics: ['order.created'] }, async (delivery) => {
 *   await handle(delivery.message);
 *   await delivery.ack();
 * });
 * ```
 */
export function createEmbeddedTransport(options: EmbeddedTransportOptions): EmbeddedTransport {
  const config = parseEmbeddedOptions(options);
  const { db, owned, logKey, location } = openLog(config);
  let store: LogStore;
  try {
    store = new LogStore(db, logTables(config.tablePrefix));
  } catch (err) {
    if (owned) db.close();
    throw new SuretyError('SURETY_CONNECTION_LOST', `could not create the embedded log's tables in ${location}`, {
      cause: err,
    });
  }
  const counts = new DeliveryCounts();
  const subscriptions = new Set<LogSubscription>();
  let closing: Promise<void> | undefined;

  const batcher = new PublishBatcher((batch) => {
    if (!db.open) throw new PublishError('SURETY_TRANSPORT_CLOSED', 'the embedded log database was closed');
    try {
      store.append(batch, config.clock.now());
    } catch (err) {
      throw toPublishError(err);
    }
    signalCommit(logKey, new Set(batch.map((out) => out.topic)));
  }, config.maxBatchSize);

  const closedError = (): PublishError =>
    new PublishError('SURETY_TRANSPORT_CLOSED', 'the embedded transport is closed');

  return Object.freeze({
    name: 'embedded' as const,
    settlement: 'checkpoint' as const,
    location,
    tables: store.tables,

    publish(out: OutgoingMessage): Promise<void> {
      if (closing) return Promise.reject(closedError());
      try {
        validateOutgoing(out);
      } catch (err) {
        return Promise.reject(err);
      }
      return batcher.enqueue(out);
    },

    isReady: (): boolean => closing === undefined,

    waitUntilReady: (): Promise<boolean> => Promise.resolve(closing === undefined),

    async subscribe(
      subscribeOptions: SubscribeOptions,
      handler: (delivery: EmbeddedDelivery) => Promise<void>,
    ): Promise<Subscription> {
      if (closing) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the embedded transport is closed');
      if (typeof handler !== 'function') throw new InvalidOptionError('handler', 'must be a function');
      const context = { store, config, counts, logKey, onClosed: (s: LogSubscription) => subscriptions.delete(s) };
      const subscription = new LogSubscription(context, parseSubscribeOptions(subscribeOptions), handler);
      subscriptions.add(subscription);
      subscription.start();
      return Object.freeze({ close: () => subscription.close() });
    },

    async committedOffset(group: string, topic: string): Promise<number> {
      if (closing) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the embedded transport is closed');
      return store.committedOffset(group, topic);
    },

    async purgeCommitted(purgeOptions?: { batchSize?: number }): Promise<number> {
      const { batchSize } = parsePurgeOptions(purgeOptions);
      let total = 0;
      for (;;) {
        if (closing) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the embedded transport is closed');
        const deleted = store.purgeCommitted(batchSize);
        total += deleted;
        if (deleted < batchSize) return total;
        // Let publishes and deliveries through between batches.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    },

    /** Commits publishes already accepted, closes every subscription (waiting for handlers), then the connection. */
    close(): Promise<void> {
      closing ??= (async () => {
        batcher.flushAll();
        await Promise.all([...subscriptions].map((s) => s.close()));
        if (owned) db.close();
      })();
      return closing;
    },
  });
}

function validateOutgoing(out: OutgoingMessage): void {
  if (out === null || typeof out !== 'object') throw new InvalidMessageError('message', 'must be an object');
  if (typeof out.topic !== 'string' || out.topic.length === 0)
    throw new InvalidMessageError('topic', 'must be a non-empty string');
  const message = out.message;
  if (message === null || typeof message !== 'object') throw new InvalidMessageError('message', 'must be an object');
  if (typeof message.id !== 'string' || message.id.length === 0)
    throw new InvalidMessageError('id', 'must be a non-empty string');
  if (message.headers === null || typeof message.headers !== 'object')
    throw new InvalidMessageError('headers', 'must be an object');
  if (!Buffer.isBuffer(message.body)) throw new InvalidMessageError('body', 'must be a Buffer');
}

/** Lock waits that ran out are timeouts; anything else means the write was refused. */
function toPublishError(err: unknown): PublishError {
  const code = sqliteErrorCode(err);
  if (code?.startsWith('SQLITE_BUSY') || code?.startsWith('SQLITE_LOCKED')) {
    return new PublishError('SURETY_PUBLISH_TIMEOUT', `the log stayed locked by another connection (${code})`, {
      cause: err,
    });
  }
  return new PublishError('SURETY_PUBLISH_NACKED', `the log refused the write (${code ?? 'unknown error'})`, {
    cause: err,
  });
}
