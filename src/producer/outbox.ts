import { buildEnvelope, type Envelope, type MessageInput } from '../core/envelope.js';
import { InvalidMessageError } from '../core/errors.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { OutboxStore, OutboxWriter } from '../ports/outbox-store.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import { rowFromEnvelope } from './outbox-rows.js';

export interface OutboxOptions {
  /**
   * The store whose outbox concern the rows are written to. A full outbox concern (a Surety store's)
   * also enables {@link Outbox.transaction}.
   */
  store: { readonly outbox: OutboxWriter | OutboxStore };
  /**
   * Assign per-ordering-key commit-order sequence numbers; needed when the relay runs `ordered`.
   * Every add must then give `orderingKey` (the entity whose messages keep their order): `key` is
   * the deduplication key, and an entity's second event with the same type and key would be a duplicate.
   * @example
   * const outbox = new Outbox({ store, ordered: true });
   * await outbox.add(tx, { type: 'account.credited', orderingKey: accountId, payload: { amount } });
   */
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
  /** True when (type, key) already existed: nothing was written. `key` deduplicates; it does not order. */
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
 * }); // committed: a relay in this process is woken at once; PostgreSQL relays elsewhere learn by NOTIFY
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
    this.store = options.store.outbox;
    this.ordered = options.ordered ?? false;
    this.notifyAfterCommit = options.notifyAfterCommit ?? false;
    this.clock = options.clock ?? systemClock;
  }

  /** Adds a message in `tx`. A rolled-back transaction leaves no trace; nothing is published before commit. */
  async add<P>(tx: SqlExecutor, input: MessageInput<P>): Promise<AddResult<P>> {
    if (this.ordered) requireOrderingKey(input);
    const now = this.clock.now();
    const { envelope, payloadJson } = buildEnvelope(input, new Date(now));
    const row = rowFromEnvelope(envelope, input.topic ?? envelope.type, payloadJson);
    // In outbox.transaction the NOTIFY is sent after the commit: in the statement, it would hold
    // PostgreSQL's cluster-wide notify lock through the commit's WAL flush.
    const notify = !this.notifyAfterCommit && !this.own.has(tx);
    const result = await this.store.insert(tx, row, { ordered: this.ordered, notify });
    return { messageId: result.messageId, duplicate: !result.inserted, envelope };
  }

  /**
   * Runs `work` in a transaction on the store's connection, then tells relays of the commit without
   * waiting for a poll: in-process ones at once, others through a notification sent after the commit
   * (PostgreSQL), which keeps concurrent producers from committing one at a time.
   */
  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const store = this.store;
    if (!('transaction' in store)) throw new TypeError('outbox.transaction needs a full store (with transaction())');
    const result = await store.transaction(async (tx) => {
      // An executor of its own: the key by which add() knows it runs in this transaction.
      const mine: SqlExecutor = { query: (text, values, hints) => tx.query(text, values, hints) };
      this.own.add(mine);
      try {
        return await work(mine);
      } finally {
        this.own.delete(mine);
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

  /** Never throws: it runs after a commit, which stands whatever a listener does. */
  private announce(notify: boolean): void {
    try {
      if (notify) this.store.notifyCommitted?.();
    } catch {
      // Best effort by contract: the relays' poll finds what a lost signal announced.
    }
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A relay's wake-up failing leaves the rows to its next poll; the other listeners still hear.
      }
    }
  }

  /** @internal Relays in this process subscribe to commit hints. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * An ordered outbox orders by `orderingKey` alone. Defaulting it to `key` invited the mix-up of
 * giving an entity id as `key`: then every later event of that type and entity is a silent duplicate.
 */
function requireOrderingKey(input: MessageInput<unknown>): void {
  if (input === null || typeof input !== 'object') return; // buildEnvelope says what is wrong
  if (input.orderingKey !== undefined && input.orderingKey !== null) return;
  throw new InvalidMessageError(
    'orderingKey',
    'is required by an ordered outbox: give the entity whose messages keep their commit order (e.g. an account id). ' +
      '`key` is the deduplication key, not an ordering key: (type, key) is unique, so a second add with the same type and key is a duplicate and writes nothing',
  );
}
