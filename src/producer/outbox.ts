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
  private readonly clock: Clock;
  private readonly listeners = new Set<() => void>();

  constructor(options: OutboxOptions) {
    this.store = options.store;
    this.ordered = options.ordered ?? false;
    this.clock = options.clock ?? systemClock;
  }

  /** Adds a message in `tx`. A rolled-back transaction leaves no trace; nothing is published before commit. */
  async add<P>(tx: SqlExecutor, input: MessageInput<P>): Promise<AddResult<P>> {
    const { envelope, payloadJson } = buildEnvelope(input, new Date(this.clock.now()));
    const row = rowFromEnvelope(envelope, input.topic ?? envelope.type, input.orderingKey ?? envelope.key, payloadJson);
    const result = await this.store.insert(tx, row, { ordered: this.ordered });
    return { messageId: result.messageId, duplicate: !result.inserted, envelope };
  }

  /**
   * Runs `work` in a transaction on the store's connection, then tells in-process relays that rows
   * were committed so they publish without waiting for a poll.
   */
  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    if (!('transaction' in this.store))
      throw new TypeError('outbox.transaction needs a full store (with transaction())');
    const result = await this.store.transaction(work);
    this.committed();
    return result;
  }

  /** Call after committing a transaction that added messages, when you manage transactions yourself. */
  committed(): void {
    for (const listener of this.listeners) listener();
  }

  /** @internal Relays in this process subscribe to commit hints. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
