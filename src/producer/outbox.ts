import { buildEnvelope, type Envelope, type MessageInput } from '../core/envelope.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { OutboxStore, OutboxWriter } from '../ports/outbox-store.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import { rowFromEnvelope } from './outbox-rows.js';

export interface OutboxOptions {
  /** Where rows are written. A full store also enables {@link Outbox.transaction}. */
  store: OutboxWriter | OutboxStore;
  /** Assign per-key commit-order sequence numbers; needed when the relay runs `ordered`. */
  ordered?: boolean;
  /**
   * For adds in transactions you commit yourself (PostgreSQL): leave the NOTIFY that wakes relays in
   * other processes to {@link Outbox.committed}, which you then call after every commit (rows of a
   * commit without it wait for the relays' poll). Without it (the default) the insert NOTIFYs at
   * commit, and every such commit holds PostgreSQL's cluster-wide notify lock through its WAL flush,
   * so concurrent producers commit one at a time. {@link Outbox.transaction} always works this way.
   */
  notifyAfterCommit?: boolean;
  clock?: Clock;
}

export interface AddResult<P = unknown> {
  /** The id of the row holding this business event (the existing one when `duplicate`). */
  readonly messageId: string;
  /** True when (type, key) already existed: nothing was written. */
  readonly duplicate: boolean;
  /** The envelope built for this call (its id differs from `messageId` when `duplicate`). */
  readonly envelope: Envelope<P>;
}

/**
 * Writes messages into the outbox inside the caller's own transaction.
 * @example
 * await outbox.transaction(async (tx) => {
 *   await tx.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [id, total]);
 *   await outbox.add(tx, { type: 'order.created', key: id, payload: { id, total } });
 * }); // committed: an in-process relay publishes at once; PostgreSQL relays elsewhere learn by NOTIFY
 */
export class Outbox {
  private readonly store: OutboxWriter | OutboxStore;
  private readonly ordered: boolean;
  private readonly notifyAfterCommit: boolean;
  private readonly clock: Clock;
  private readonly listeners = new Set<() => void>();
  /** Transactions run by {@link transaction}: their commit is followed by the notification. */
  private readonly own = new WeakSet<SqlExecutor>();

  constructor(options: OutboxOptions) {
    this.store = options.store;
    this.ordered = options.ordered ?? false;
    this.notifyAfterCommit = options.notifyAfterCommit ?? false;
    this.clock = options.clock ?? systemClock;
  }

  /** Adds a message in `tx`. A rolled-back transaction leaves no trace; nothing is published before commit. */
  async add<P>(tx: SqlExecutor, input: MessageInput<P>): Promise<AddResult<P>> {
    const { envelope, payloadJson } = buildEnvelope(input, new Date(this.clock.now()));
    const row = rowFromEnvelope(envelope, input.topic ?? envelope.type, input.orderingKey ?? envelope.key, payloadJson);
    const notify = !this.notifyAfterCommit && !this.own.has(tx);
    const result = await this.store.insert(tx, row, { ordered: this.ordered, notify });
    return { messageId: result.messageId, duplicate: !result.inserted, envelope };
  }

  /**
   * Runs `work` in a transaction on the store's connection, then tells relays that rows were
   * committed so they publish without waiting for a poll: in-process ones at once, others through a
   * notification sent after the commit (PostgreSQL).
   */
  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    if (!('transaction' in this.store))
      throw new TypeError('outbox.transaction needs a full store (with transaction())');
    const result = await this.store.transaction(async (tx) => {
      this.own.add(tx);
      try {
        return await work(tx);
      } finally {
        this.own.delete(tx);
      }
    });
    this.announce(true);
    return result;
  }

  /**
   * Call after committing a transaction that added messages, when you manage transactions yourself:
   * in-process relays publish at once, and with `notifyAfterCommit` relays elsewhere are notified.
   */
  committed(): void {
    this.announce(this.notifyAfterCommit);
  }

  private announce(notify: boolean): void {
    if (notify) this.store.notifyCommitted?.();
    for (const listener of this.listeners) listener();
  }

  /** @internal Relays in this process subscribe to commit hints. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
