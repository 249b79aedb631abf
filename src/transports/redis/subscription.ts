import { describeError } from '../../core/errors.js';
import type { Delivery, Subscription } from '../../ports/transport.js';
import type { AckCoalescer } from './ack-coalescer.js';
import { RedisConnection } from './connection.js';
import { StreamDelivery, type Settler } from './delivery.js';
import type { RedisDriver } from './driver.js';
import { ensureGroup, isReplyError } from './groups.js';
import type { ResolvedRedisOptions } from './options.js';
import {
  claimIdle,
  claimOne,
  readOwnPending,
  touchPending,
  withDeliveryCounts,
  type GroupMember,
  type Received,
} from './pending-entries.js';
import { readGroupEntries } from './stream-replies.js';
import { runHandler } from '../run-handler.js';

/** One stream a subscription reads, and the topic its deliveries carry. */
export interface ConsumedStream {
  readonly stream: string;
  readonly topic: string;
}

/** What a subscription shares with its transport. */
export interface SubscriptionContext {
  readonly driver: RedisDriver;
  readonly options: ResolvedRedisOptions;
  /** The transport's command connection: acks, claims and group creation never wait behind a blocking read. */
  readonly commands: RedisConnection;
  readonly acks: AckCoalescer;
}

const keyOf = (stream: string, id: string): string => `${stream}\0${id}`;

/**
 * Reads a consumer group's streams on a connection of its own with a blocking `XREADGROUP ... >`,
 * never holding more than `prefetch` entries unsettled. After every (re)connect it first re-reads
 * its own pending list (entries whose reply a lost connection swallowed), and every
 * `claimIntervalMs` it claims entries idle longer than `claimIdleMs` on any consumer (one that
 * died). Entries already in hand here are never handed out twice.
 */
export class StreamSubscription implements Subscription, Settler {
  private readonly reader: RedisConnection;
  /** Read and not yet handed to the handler. */
  private readonly backlog: Received[] = [];
  /** Handed to the handler, not settled. */
  private readonly inFlight = new Map<string, { delivery: StreamDelivery; since: number }>();
  /** Every entry in hand: in the backlog, in flight, or waiting to be retried. */
  private readonly inHand = new Set<string>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** Deliveries handed out before the connection was lost: they count as unsettled no more. */
  private readonly voided = new WeakSet<StreamDelivery>();
  private readonly running = new Set<Promise<void>>();
  private readonly acking = new Set<Promise<void>>();
  private readonly claimCursors = new Map<string, string>();
  /** Keys acked while a read of pending entries was under way: its reply may predate the XACK. */
  private readonly ackWatches = new Set<Set<string>>();
  private readonly topics: Map<string, string>;
  private rereadOwn = true;
  private closed = false;
  private closing: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private claimTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private wakeLoop: (() => void) | undefined;

  constructor(
    private readonly ctx: SubscriptionContext,
    private readonly streams: readonly ConsumedStream[],
    private readonly group: string,
    private readonly consumer: string,
    private readonly prefetch: number,
    private readonly handler: (delivery: Delivery) => Promise<void>,
    private readonly onClosed: () => void,
  ) {
    this.reader = new RedisConnection(ctx.driver, ctx.options, `${ctx.options.connectionName}:sub`);
    this.reader.onReady(() => this.afterConnect());
    this.topics = new Map(streams.map((s) => [s.stream, s.topic]));
  }

  async start(): Promise<void> {
    const { startTimeoutMs, url } = this.ctx.options;
    const what = `could not subscribe to ${this.streamNames()}`;
    if (!(await this.reader.waitUntilReady(startTimeoutMs))) throw this.reader.notConnected(what, url);
    if (!(await this.ctx.commands.waitUntilReady(startTimeoutMs))) throw this.ctx.commands.notConnected(what, url);
    await this.ensureGroups();
    this.loop = this.run();
    this.claimTimer = setInterval(() => void this.claimPass(), this.ctx.options.claimIntervalMs);
    const third = Math.max(10, Math.floor(this.ctx.options.claimIdleMs / 3));
    this.keepAliveTimer = setInterval(() => void this.keepAlive(), third);
    void this.claimPass();
  }

  close(): Promise<void> {
    this.closing ??= this.stop().finally(this.onClosed);
    return this.closing;
  }

  async ack(delivery: StreamDelivery): Promise<void> {
    const { stream, id } = delivery.received.entry;
    // A delivery the connection's loss voided is delivered again; its late ack is still true.
    if (this.voided.has(delivery)) return this.ctx.acks.ack(stream, this.group, id);
    const key = keyOf(stream, id);
    this.inFlight.delete(key);
    this.wake();
    this.dispatch();
    const acked = this.ctx.acks.ack(stream, this.group, id);
    // In hand until Redis answered: a re-read of the pending list meanwhile must not deliver it again.
    const tracked = acked
      .catch(() => {})
      .finally(() => {
        this.inHand.delete(key);
        for (const watch of this.ackWatches) watch.add(key);
        this.acking.delete(tracked);
      });
    this.acking.add(tracked);
    return acked;
  }

  retry(delivery: StreamDelivery): void {
    if (this.voided.has(delivery)) return; // delivered again already
    const { stream, id } = delivery.received.entry;
    const key = keyOf(stream, id);
    this.inFlight.delete(key);
    this.wake();
    if (this.closed) return void this.inHand.delete(key);
    const delay = this.ctx.options.retryDelayMs;
    this.retryTimers.set(
      key,
      setTimeout(() => void this.redeliver(delivery, key), delay),
    );
  }

  /**
   * After a (re)connect: read this consumer's pending list again before new entries. As a broker
   * requeues what a lost connection had not settled, deliveries in hand are void and come again
   * from that list (their handlers may still ack: an XACK holds from any connection).
   */
  private afterConnect(): void {
    this.rereadOwn = true;
    for (const [key, { delivery }] of this.inFlight) {
      this.voided.add(delivery);
      this.inFlight.delete(key);
      this.inHand.delete(key);
    }
    this.wake();
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      if (!this.reader.isReady()) {
        await this.reader.waitUntilReady(1_000);
        continue;
      }
      const free = this.prefetch - this.inFlight.size - this.backlog.length;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.wakeLoop = resolve));
        continue;
      }
      try {
        if (this.rereadOwn) {
          this.rereadOwn = false;
          await this.readOwnPending();
          continue;
        }
        const { group, consumer } = this;
        const names = this.streams.map((s) => s.stream);
        const reply = await this.reader.client.callBuffer(
          'XREADGROUP',
          'GROUP',
          group,
          consumer,
          'COUNT',
          free,
          'BLOCK',
          this.ctx.options.blockMs,
          'STREAMS',
          ...names,
          ...names.map(() => '>'),
        );
        // First deliveries: Redis counts this one as the first.
        this.enqueue(readGroupEntries(reply).map((entry) => ({ entry, deliveries: 1 }) as Received));
      } catch (err) {
        if (this.closed) break;
        // The reply may have been lost with entries in it: they are in this consumer's pending list.
        this.rereadOwn = true;
        if (isReplyError(err, 'NOGROUP')) await this.ensureGroups().catch((e) => this.logFailure('XGROUP CREATE', e));
        else this.logFailure('XREADGROUP', err);
        if (this.reader.isReady()) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** Redelivers, after `retryDelayMs`, an entry handed back: claimed to itself unless another consumer took it meanwhile. */
  private async redeliver(delivery: StreamDelivery, key: string): Promise<void> {
    this.retryTimers.delete(key);
    if (this.closed) return void this.inHand.delete(key);
    const { entry, deliveries } = delivery.received;
    const member = this.member(entry.stream);
    try {
      const again = await claimOne(this.ctx.commands.client, member, entry.id, this.ctx.options.retryDelayMs);
      this.inHand.delete(key);
      if (again) this.enqueue([{ entry: again as Received['entry'], deliveries: deliveries + 1 }]);
    } catch (err) {
      // Still pending here: the claim pass or a successor delivers it after claimIdleMs.
      this.inHand.delete(key);
      this.logFailure('XCLAIM', err);
    }
  }

  private async readOwnPending(): Promise<void> {
    const commands = this.ctx.commands.client;
    for (const { stream } of this.streams) {
      const member = this.member(stream);
      for (let after: string | undefined = '0'; after !== undefined;) {
        const from: string = after;
        after = await this.enqueueRead(async () => {
          const { entries, deleted, last } = await readOwnPending(this.reader.client, member, from, 100);
          if (deleted.length > 0) {
            this.reportTrimmed(stream, deleted);
            // Gone from the stream, they would stay in the pending list for ever.
            await commands.call('XACK', stream, this.group, ...deleted);
          }
          return { received: await withDeliveryCounts(commands, member, entries), result: last };
        });
      }
    }
  }

  /**
   * Runs `read` (of pending entries, with their counts) and enqueues what it found, less the
   * entries acked meanwhile: its reply may predate their XACK.
   */
  private async enqueueRead<T>(read: () => Promise<{ received: Received[]; result: T }>): Promise<T> {
    const acked = new Set<string>();
    this.ackWatches.add(acked);
    try {
      const { received, result } = await read();
      this.enqueue(received.filter((r) => !acked.has(keyOf(r.entry.stream, r.entry.id))));
      return result;
    } finally {
      this.ackWatches.delete(acked);
    }
  }

  /** Claims entries idle longer than claimIdleMs on any consumer. */
  private claimPass(): Promise<void> {
    if (this.closed || this.claiming || !this.ctx.commands.isReady()) return Promise.resolve();
    this.claiming = this.claimAll()
      .catch((err) => this.logFailure('XAUTOCLAIM', err))
      .finally(() => (this.claiming = undefined));
    return this.claiming;
  }

  private async claimAll(): Promise<void> {
    const { claimIdleMs } = this.ctx.options;
    const client = this.ctx.commands.client;
    for (const { stream } of this.streams) {
      const member = this.member(stream);
      const free = this.prefetch - this.inFlight.size - this.backlog.length;
      if (free <= 0 || this.closed) continue;
      await this.enqueueRead(async () => {
        const claimed = await claimIdle(client, member, claimIdleMs, this.claimCursors.get(stream) ?? '0-0', free);
        this.claimCursors.set(stream, claimed.cursor);
        this.reportTrimmed(stream, claimed.deleted);
        return { received: await withDeliveryCounts(client, member, claimed.entries), result: undefined };
      });
    }
  }

  /**
   * Resets the idle time of entries handled here for a third of claimIdleMs or longer, so that a
   * handler slower than claimIdleMs keeps its entry (no consumer, this one included, claims it).
   */
  private async keepAlive(): Promise<void> {
    if (this.closed || !this.ctx.commands.isReady()) return;
    const third = Math.floor(this.ctx.options.claimIdleMs / 3);
    const now = Date.now();
    for (const { stream } of this.streams) {
      const slow = [...this.inFlight.values()]
        .filter((f) => f.delivery.received.entry.stream === stream && now - f.since >= third)
        .map((f) => f.delivery.received.entry.id);
      await touchPending(this.ctx.commands.client, this.member(stream), slow, third).catch((err) =>
        this.logFailure('XCLAIM JUSTID', err),
      );
    }
  }

  private enqueue(received: readonly Received[]): void {
    for (const r of received) {
      const key = keyOf(r.entry.stream, r.entry.id);
      if (this.inHand.has(key)) continue;
      this.inHand.add(key);
      this.backlog.push(r);
    }
    this.dispatch();
  }

  private dispatch(): void {
    while (!this.closed && this.inFlight.size < this.prefetch && this.backlog.length > 0) {
      const received = this.backlog.shift()!;
      const { stream, id } = received.entry;
      const topic = this.topics.get(stream) ?? stream;
      const delivery = new StreamDelivery(received, topic, this.ctx.options.maxDeliveries, this);
      this.inFlight.set(keyOf(stream, id), { delivery, since: Date.now() });
      const run = this.handle(delivery);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
  }

  private handle(delivery: StreamDelivery): Promise<void> {
    return runHandler(this.handler, delivery, this.ctx.options.logger, { group: this.group, topic: delivery.topic });
  }

  private wake(): void {
    const wake = this.wakeLoop;
    this.wakeLoop = undefined;
    wake?.();
  }

  private async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.claimTimer);
    clearInterval(this.keepAliveTimer);
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.reader.close(); // ends the blocking read at once
    this.wake();
    await this.loop;
    await this.claiming;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]),
      new Promise((resolve) => (timer = setTimeout(resolve, this.ctx.options.closeTimeoutMs))),
    ]);
    clearTimeout(timer);
    await Promise.allSettled([...this.acking]);
    await this.handBack().catch((err) => this.logFailure('XCLAIM IDLE', err));
  }

  /**
   * Entries left unsettled (held, read ahead, waiting for a retry) stay pending on this consumer;
   * marking them idle for claimIdleMs lets any live consumer claim them at once. A consumer left
   * with nothing pending is removed from its group, so that per-process names do not pile up.
   */
  private async handBack(): Promise<void> {
    if (!this.ctx.commands.isReady()) return;
    const client = this.ctx.commands.client;
    const byStream = new Map<string, string[]>();
    for (const key of this.inHand) {
      const [stream, id] = key.split('\0') as [string, string];
      byStream.set(stream, [...(byStream.get(stream) ?? []), id]);
    }
    for (const { stream } of this.streams) {
      const member = this.member(stream);
      await touchPending(client, member, byStream.get(stream) ?? [], 0, this.ctx.options.claimIdleMs);
      const own = await client.call('XPENDING', stream, this.group, '-', '+', 1, this.consumer);
      if (Array.isArray(own) && own.length === 0)
        await client.call('XGROUP', 'DELCONSUMER', stream, this.group, this.consumer);
    }
  }

  private async ensureGroups(): Promise<void> {
    for (const { stream } of this.streams) {
      await ensureGroup(this.ctx.commands.client, stream, this.group, this.ctx.options.groupStart);
    }
  }

  private member(stream: string): GroupMember {
    return { stream, group: this.group, consumer: this.consumer };
  }

  private reportTrimmed(stream: string, deleted: readonly string[]): void {
    if (deleted.length === 0) return;
    // The entries are gone from the stream: nothing can deliver them any more. Say so loudly.
    this.ctx.options.logger.error(
      { stream, group: this.group, entries: deleted },
      'pending entries were trimmed from the stream before they were acked (maxLen/maxAgeMs too small): they are lost',
    );
  }

  private logFailure(command: string, err: unknown): void {
    if (this.closed) return;
    this.ctx.options.logger.warn(
      { err: describeError(err), streams: this.streamNames(), group: this.group },
      `redis ${command} failed; retrying`,
    );
  }

  private streamNames(): string {
    return this.streams.map((s) => s.stream).join(',');
  }
}
