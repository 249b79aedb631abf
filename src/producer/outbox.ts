import { buildEnvelope, type Envelope, type MessageInput } from '../core/envelope.js';
import { InvalidMessageError } from '../core/errors.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { OutboxRelayStore, OutboxRow, OutboxStore, OutboxWriter } from '../ports/outbox-store.js';
import type { SqlExecutor } from '../ports/sql-executor.js';
import { checkLeased, newTransactionRows, type CommitHandoff, type TransactionRows } from './commit-handoff.js';
import { leasedRow, rowFromEnvelope } from './outbox-rows.js';

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
 * }); // committed: a relay in this process publishes at once; PostgreSQL relays elsewhere learn by NOTIFY
 */
export class Outbox {
  private readonly store: OutboxWriter | OutboxStore;
  private readonly ordered: boolean;
  private readonly notifyAfterCommit: boolean;
  private readonly clock: Clock;
  private readonly listeners = new Set<() => void>();
  /** Transactions run by {@link transaction}: their commit is followed by the handoff and the notification. */
  private readonly own = new WeakMap<SqlExecutor, TransactionRows>();
  private handoff: CommitHandoff | undefined;

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
    const own = this.own.get(tx);
    // Ordered rows are never handed over: the claim is what holds a key's later row behind its earlier one.
    const handoff = own && !this.ordered ? this.handoff : undefined;
    const lease = handoff && { owner: handoff.owner, until: now + handoff.leaseMs };
    const notify = !this.notifyAfterCommit && !own;
    const result = await this.store.insert(tx, row, { ordered: this.ordered, notify, ...(lease && { lease }) });
    if (own && result.inserted) {
      const leased = lease && result.seq !== undefined ? leasedRow(row, result.seq, lease) : undefined;
      if (!leased) own.unleased = true;
      else if (!own.handedOver) own.leased.push(leased);
      else this.letGo([leased]); // an add not awaited in the callback, done after the handoff: committed, untaken
    }
    return { messageId: result.messageId, duplicate: !result.inserted, envelope };
  }

  /**
   * Runs `work` in a transaction on the store's connection, then gets its rows published without
   * waiting for a poll. A relay in this process given this outbox publishes them at once, without
   * claiming them: they were inserted already claimed by it. Otherwise relays are told of the commit:
   * in-process ones at once, others through a notification sent after the commit (PostgreSQL).
   */
  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const store = this.store;
    if (!('transaction' in store)) throw new TypeError('outbox.transaction needs a full store (with transaction())');
    const rows = newTransactionRows();
    let check: Promise<void> | undefined;
    let result: T;
    try {
      result = await store.transaction(async (tx) => {
        // An executor of its own: the key by which add() knows it runs in this transaction.
        const mine: SqlExecutor = { query: (text, values, hints) => tx.query(text, values, hints) };
        this.own.set(mine, rows);
        try {
          const value = await work(mine);
          check = checkLeased(store, tx, rows); // sent ahead of the COMMIT, read after it
          return value;
        } finally {
          this.own.delete(mine);
        }
      });
    } catch (err) {
      // Rows may have committed anyway: on their own after an undoing statement, or before a DDL (MySQL).
      // Leased to the relay, they would wait out the lease; releasing rows that never committed does nothing.
      rows.handedOver = true;
      if (rows.leased.length > 0) this.letGo(rows.leased);
      throw err;
    }
    await check;
    this.handOver(rows);
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

  /**
   * @internal A relay in this process offers to publish committed rows directly. Refused (undefined)
   * for an ordered outbox, when another relay has it, or when the relay's store is not this outbox's
   * store object (or one made from the other with Object.create): a store with the same table names may be
   * another database, where the rows it took would be marked, and other rows with their seqs.
   */
  attachHandoff(handoff: CommitHandoff, store: OutboxRelayStore): (() => void) | undefined {
    const own = this.store;
    if (this.ordered || this.handoff || !('transaction' in own)) return undefined;
    // A store written before the handoff: without these its leased rows could only wait for their lease.
    if (typeof own.countRows !== 'function' || typeof own.releaseLeased !== 'function') return undefined;
    const same = store === own || Object.getPrototypeOf(store) === own || Object.getPrototypeOf(own) === store;
    if (!same) return undefined;
    this.handoff = handoff;
    return () => {
      if (this.handoff === handoff) this.handoff = undefined;
    };
  }

  /** After a commit: leased rows to the relay that holds them; the rest due at once, and relays told. */
  private handOver(rows: TransactionRows): void {
    rows.handedOver = true;
    const { leased } = rows;
    // Rows whose add ended after the check are committed, but unchecked: they go to the claims.
    const checked = rows.undone ? 0 : rows.checked;
    let left: readonly OutboxRow[] = leased;
    try {
      if (checked > 0 && this.handoff)
        left = [...this.handoff.take(leased.slice(0, checked)), ...leased.slice(checked)];
    } catch {
      // The commit stands whatever the relay does: its rows are left to the claims instead.
    }
    if (left.length > 0) this.letGo(left);
    else if (leased.length === 0 || rows.unleased) this.announce(true);
  }

  /**
   * Makes committed leased rows due at once, then tells relays. Only rows still exactly as inserted
   * (seq, id and lease end): not another transaction's row with the same id or a seq SQLite gave
   * again, nor a row claimed since. Best effort: a row a failed release keeps falls due when its lease ends.
   */
  private letGo(rows: readonly OutboxRow[]): void {
    const store = this.store as OutboxStore;
    const byOwner = new Map<string, OutboxRow[]>();
    for (const row of rows) byOwner.set(row.claimedBy!, [...(byOwner.get(row.claimedBy!) ?? []), row]);
    const now = this.clock.now();
    const releases = [...byOwner].map(([owner, leased]) =>
      Promise.resolve().then(() => store.releaseLeased(owner, leased, now)),
    );
    void Promise.allSettled(releases).then(() => this.announce(true));
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
