import { Consumer } from '../../consumer/consumer.js';
import type { ConsumerOptions } from '../../consumer/consumer-options.js';
import { ReplayJob } from '../../consumer/replay-job.js';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../../ports/store.js';
import { Outbox } from '../../producer/outbox.js';
import { OutboxRelay } from '../../producer/outbox-relay.js';
import { createSqliteStore, type SqliteStore } from '../../stores/sqlite/store.js';
import { loadSqliteDriver, type SqliteDatabase } from '../../transports/embedded/driver.js';
import { createEmbeddedTransport, type EmbeddedTransport } from '../../transports/embedded/embedded-transport.js';
import { Changes } from './changes.js';
import { FaultyPublisher, type PublishedMessage } from './faulty-publisher.js';
import { FaultySubscriber } from './faulty-subscriber.js';
import { harnessFaults, type HarnessFaults } from './harness-faults.js';
import { parseHarnessOptions, type ResolvedHarnessOptions, type TestHarnessOptions } from './harness-options.js';
import { ManualClock } from './manual-clock.js';
import { observedStore } from './observed-store.js';
import { outstanding, type WatchedGroup } from './outstanding.js';
import { deadLetteredMessages, handledMessages, type DeadLetteredMessage, type HandledMessage } from './queries.js';
import { settleWait } from './settle-wait.js';

/** A consumer's options in the harness: the harness gives its store, transport and clock. */
export type HarnessConsumerOptions = Omit<ConsumerOptions, 'store' | 'transport' | 'clock'>;

interface Registered {
  readonly consumer: Consumer;
  readonly replay: ReplayJob | undefined;
}

/**
 * An in-process pipeline for your tests: outbox, relay, the embedded log and your consumers, on a
 * private SQLite database (or your own store), driven by a manual clock, with fault hooks. Build it
 * with {@link createTestHarness}.
 */
export class TestHarness<S extends Store = Store> {
  /** The harness clock: relay backoff, retry schedules and the replay job run on it. */
  readonly clock: ManualClock;
  /** Write messages in your transactions with it, as in production. */
  readonly outbox: Outbox;
  readonly relay: OutboxRelay;
  readonly faults: HarnessFaults;
  private readonly consumers: Registered[] = [];
  private readonly changes = new Changes();
  private readonly view: Store;
  private readonly publisher: FaultyPublisher;
  private readonly subscriber: FaultySubscriber;
  private readonly waits = new Set<(err: Error) => void>();
  private readonly unhook: (() => void)[] = [];
  private crashes = 0;
  private started = false;
  private closing: Promise<void> | undefined;

  /** @internal Use {@link createTestHarness}. */
  constructor(
    /** The store: yours, or the harness's SQLite one (its `db` is the database your handlers write to). */
    readonly store: S,
    private readonly transport: EmbeddedTransport,
    /** The log's database, the harness's own connection: settled() reads what each group has yet to consume. */
    private readonly logDb: SqliteDatabase,
    private readonly o: ResolvedHarnessOptions,
    private readonly ownsStore: boolean,
  ) {
    this.clock = new ManualClock(o.startAt ?? Date.now());
    const changed = this.changes.notify;
    this.view = observedStore(store, changed);
    this.publisher = new FaultyPublisher(transport, this.clock, changed);
    this.subscriber = new FaultySubscriber(transport, changed);
    this.outbox = new Outbox({ store: this.view, clock: this.clock, ordered: o.ordered });
    this.relay = new OutboxRelay({
      pollIntervalMs: 50,
      retention: false,
      ordered: o.ordered,
      logger: this.logger,
      ...o.relay,
      backoff: { jitter: 0, ...(o.relay.backoff as object | undefined) },
      store: this.view,
      publisher: this.publisher,
      clock: this.clock,
    });
    // The fast path: a commit wakes the relay at once, unless the producer "crashed" right after it.
    this.unhook.push(
      this.outbox.onCommitted(() => {
        if (this.crashes > 0) this.crashes--;
        else this.relay.wake();
        changed();
      }),
      this.clock.onAdvance(() => {
        this.relay.wake();
        changed();
      }),
    );
    this.faults = harnessFaults(this.publisher, this.subscriber, () => void this.crashes++);
  }

  private get logger(): Logger | null {
    return this.o.logger ?? null;
  }

  /**
   * A consumer on the harness's store and log, with a replay job of its own (unless `replay: false`).
   * Register its handlers, then {@link start} the harness.
   * @example
   * harness.consumer({ group: 'billing' }).on('order.created', async (order, { tx }) => { ... });
   */
  consumer(options: HarnessConsumerOptions): Consumer {
    if (this.started) throw new TypeError('harness.consumer(): add consumers before harness.start()');
    const consumer = new Consumer({
      logger: this.logger,
      retention: false,
      ...options,
      store: this.view,
      transport: this.subscriber,
      clock: this.clock,
    });
    const replay = this.o.replay === false ? undefined : new ReplayJob(consumer, { intervalMs: 25, ...this.o.replay });
    this.consumers.push({ consumer, replay });
    return consumer;
  }

  /**
   * Starts the consumers, their replay jobs and the relay, and resolves once the relay's first claim
   * has run (unless the connection is dropped): from then on, each commit is published by the claim
   * it wakes, never by a start-up claim that happened to come after it.
   */
  async start(): Promise<void> {
    if (this.closing) throw new TypeError('harness.start(): the harness is closed');
    if (this.started) return;
    this.started = true;
    for (const { consumer, replay } of this.consumers) {
      await consumer.start();
      replay?.start();
    }
    const claimed = this.changes.next((what) => what === 'outbox.claim' || what === 'outbox.claimLocked');
    await this.relay.start();
    if (!this.publisher.connectionDropped) await claimed;
  }

  /**
   * Resolves when every committed message has been published, handled or dead-lettered and nothing
   * is due by the harness clock: no outbox row due, no publish or delivery in flight, no dead letter
   * due for replay. Rows retried later do not hold it: advance the clock and await it again. Throws
   * a NotSettledError listing what is outstanding after `timeoutMs` (default: the harness's
   * `settleTimeoutMs`).
   */
  settled(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.closing) return Promise.reject(new TypeError('harness.settled(): the harness is closed'));
    const timeoutMs = options.timeoutMs ?? this.o.settleTimeoutMs;
    return settleWait(
      this.changes,
      () => outstanding(this.state),
      timeoutMs,
      (abort) => {
        this.waits.add(abort);
        return () => this.waits.delete(abort);
      },
    );
  }

  /** What is still outstanding now, one line each (what settled() waits for). */
  outstanding(): Promise<string[]> {
    return outstanding(this.state);
  }

  /** Every publish the broker confirmed, in confirm order, with its envelope decoded. */
  published<P = unknown>(): PublishedMessage<P>[] {
    return [...this.publisher.confirmed] as PublishedMessage<P>[];
  }

  /** Messages handled by `group` (default: every harness consumer), in publish order. */
  handled<P = unknown>(group?: string): Promise<HandledMessage<P>[]> {
    const groups = group === undefined ? this.consumers.map((c) => c.consumer.group) : [group];
    return handledMessages(this.store, this.publisher.confirmed, groups) as Promise<HandledMessage<P>[]>;
  }

  /** Rows of the dead-letter table (of `group`, or all), oldest first, statuses as of the harness clock. */
  deadLettered<P = unknown>(group?: string): Promise<DeadLetteredMessage<P>[]> {
    return deadLetteredMessages(this.store, this.clock.now(), group) as Promise<DeadLetteredMessage<P>[]>;
  }

  /** Stops everything and closes what the harness opened; a store you gave stays open. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    for (const abort of [...this.waits]) abort(new TypeError('the harness was closed while settled() waited'));
    for (const off of this.unhook) off();
    await Promise.all(this.consumers.map((c) => c.replay?.stop()));
    await Promise.all(this.consumers.map((c) => c.consumer.stop()));
    await this.relay.stop();
    await this.publisher.close();
    this.logDb.close();
    if (this.ownsStore) await this.store.close();
  }

  private get state() {
    const unconsumed = async (group: string, topic: string) => {
      const after = await this.transport.committedOffset(group, topic);
      const row = this.logDb
        .prepare(`SELECT count(*) AS n FROM ${this.transport.tables.log} WHERE topic = ? AND log_offset > ?`)
        .get(topic, after) as { n: number };
      return row.n;
    };
    const groups = (): WatchedGroup[] =>
      this.consumers.map(({ consumer, replay }) => ({
        group: consumer.group,
        topics: consumer.options.topics ?? consumer.registry.types,
        replays: replay !== undefined,
      }));
    return {
      admin: this.store.admin,
      now: () => this.clock.now(),
      publisher: this.publisher,
      subscriber: this.subscriber,
      groups,
      unconsumed,
    };
  }
}

/**
 * Builds a {@link TestHarness}: by default on a private in-memory SQLite database and the embedded
 * log, both closed by `close()`; with `store`, on yours.
 * @example
 * const harness = await createTestHarness();
 * harness.consumer({ group: 'billing' }).on('order.created', async (order, { tx }) => { ... });
 * await harness.start();
 * await harness.outbox.transaction((tx) => harness.outbox.add(tx, { type: 'order.created', key: 'o-1', payload: { id: 'o-1' } }));
 * await harness.settled();
 * await harness.close();
 */
export async function createTestHarness(options?: Omit<TestHarnessOptions, 'store'>): Promise<TestHarness<SqliteStore>>;
export async function createTestHarness<S extends Store>(
  options: TestHarnessOptions & { store: S },
): Promise<TestHarness<S>>;
export async function createTestHarness(options?: TestHarnessOptions): Promise<TestHarness> {
  const o = parseHarnessOptions(options);
  const own = o.store === undefined;
  const store = o.store ?? (await createSqliteStore({ path: ':memory:' }));
  let db: SqliteDatabase | undefined;
  let transport: EmbeddedTransport | undefined;
  try {
    if (own) await store.migrate();
    db = new (loadSqliteDriver())(':memory:');
    transport = createEmbeddedTransport({ database: db, logger: o.logger ?? null });
    return new TestHarness(store, transport, db, o, own);
  } catch (err) {
    await transport?.close();
    db?.close();
    if (own) await store.close();
    throw err;
  }
}
