import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describeError } from '../../core/errors.js';
import type { Subscription } from '../../ports/transport.js';
import { onCommit } from './commit-signal.js';
import { LogDelivery, type EmbeddedDelivery, type LogEntry } from './delivery.js';
import type { DeliveryCounts } from './delivery-counts.js';
import type { LogStore, TopicProgress } from './log-store.js';
import type { EmbeddedSubscribeConfig, EmbeddedTransportConfig } from './options.js';
import { TopicCursor } from './topic-cursor.js';
import { runHandler } from '../run-handler.js';
import { TurnFlush } from '../turn-flush.js';

/** What a subscription shares with its transport. */
export interface SubscriptionContext {
  readonly store: LogStore;
  readonly config: EmbeddedTransportConfig;
  readonly counts: DeliveryCounts;
  readonly logKey: string;
  readonly onClosed: (subscription: LogSubscription) => void;
}

/**
 * One consumer of a group on some topics. It consumes a topic only while holding that (group,
 * topic)'s lease, so one subscriber at a time advances a checkpoint; others stand by and take over
 * when the holder closes or its lease expires.
 */
export class LogSubscription implements Subscription {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID()}`;
  private readonly cursors = new Map<string, TopicCursor>();
  private readonly renewedAt = new Map<string, number>();
  private readonly standingBy = new Set<string>();
  private ready: LogEntry[] = [];
  private unsettled = 0;
  private readonly handlers = new Set<Promise<void>>();
  private state: 'open' | 'closing' | 'closed' = 'open';
  private pumpScheduled = false;
  /** Acks arriving in one event-loop turn share one checkpoint write. */
  private readonly checkpoints = new TurnFlush(() => {
    if (this.state !== 'closed') this.flushCheckpoints();
  });
  private pollTimer: NodeJS.Timeout | undefined;
  private stopListening: () => void = () => {};
  private nextTopic = 0;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly ctx: SubscriptionContext,
    private readonly options: EmbeddedSubscribeConfig,
    private readonly handler: (delivery: EmbeddedDelivery) => Promise<void>,
  ) {}

  start(): void {
    this.maintainLeases();
    this.stopListening = onCommit(this.ctx.logKey, (topics) => {
      if (this.options.topics.some((topic) => topics.has(topic))) this.schedulePump();
    });
    this.pollTimer = setTimeout(this.poll, this.ctx.config.pollIntervalMs);
    this.schedulePump();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.state = 'closing';
    clearTimeout(this.pollTimer);
    this.stopListening();
    this.ready = [];
    await Promise.allSettled([...this.handlers]);
    this.flushCheckpoints();
    for (const [topic, cursor] of this.cursors) {
      cursor.retire();
      this.attempt('release the lease', topic, () =>
        this.ctx.store.releaseLease(this.options.group, topic, this.owner),
      );
    }
    this.cursors.clear();
    this.state = 'closed';
    this.checkpoints.releaseAll();
    this.ctx.onClosed(this);
  }

  private readonly poll = (): void => {
    if (this.state !== 'open') return;
    this.maintainLeases();
    this.pump();
    this.pollTimer = setTimeout(this.poll, this.ctx.config.pollIntervalMs);
  };

  /** Claims free leases, renews held ones a third of the way through their lifetime. */
  private maintainLeases(): void {
    const now = this.ctx.config.clock.now();
    const renewEvery = this.ctx.config.leaseTtlMs / 3;
    const due: string[] = [];
    for (const topic of this.options.topics) {
      if (!this.cursors.has(topic)) this.attempt('claim the lease', topic, () => this.claim(topic, now));
      else if (now - (this.renewedAt.get(topic) ?? 0) >= renewEvery) due.push(topic);
    }
    this.flushCheckpoints(due);
  }

  private claim(topic: string, now: number): void {
    const { store, config } = this.ctx;
    const { group } = this.options;
    const lease = store.readLease(group, topic);
    const heldElsewhere = lease !== undefined && lease.owner !== this.owner && lease.expiresAt > now;
    if (heldElsewhere || !store.acquireLease(group, topic, this.owner, now, config.leaseTtlMs)) {
      if (!this.standingBy.has(topic)) {
        this.standingBy.add(topic);
        config.logger.warn(
          { group, topic, holder: lease?.owner },
          'another subscriber consumes this group and topic; standing by',
        );
      }
      return;
    }
    this.standingBy.delete(topic);
    this.cursors.set(topic, new TopicCursor(topic, store.committedOffset(group, topic)));
    this.renewedAt.set(topic, now);
    config.logger.debug({ group, topic, owner: this.owner }, 'lease acquired');
  }

  private dropCursor(topic: string): void {
    const cursor = this.cursors.get(topic);
    if (!cursor) return;
    cursor.retire();
    this.cursors.delete(topic);
    this.ready = this.ready.filter((entry) => entry.cursor !== cursor);
    this.ctx.config.logger.warn(
      { group: this.options.group, topic },
      'lease lost; unacked messages go to the new holder',
    );
  }

  /**
   * Writes every checkpoint that can advance and renews the leases of `renewTopics`, recording how
   * far each topic was read, in one transaction. A failed write is retried on the next poll.
   */
  private flushCheckpoints(renewTopics: readonly string[] = []): void {
    const progress = new Map<string, TopicProgress>();
    for (const cursor of this.cursors.values()) {
      const commitOffset = cursor.commitCandidate();
      if (commitOffset !== undefined || renewTopics.includes(cursor.topic))
        progress.set(cursor.topic, { readOffset: cursor.position, commitOffset });
    }
    if (progress.size === 0) return;
    const { store, config, counts } = this.ctx;
    const { group } = this.options;
    const now = config.clock.now();
    this.attempt('commit the checkpoint', [...progress.keys()].join(','), () => {
      const lost = new Set(store.renewAndCommit(group, this.owner, progress, now, config.leaseTtlMs));
      for (const [topic, { commitOffset }] of progress) {
        if (lost.has(topic)) {
          this.dropCursor(topic);
          continue;
        }
        this.renewedAt.set(topic, now);
        if (commitOffset === undefined) continue;
        this.cursors.get(topic)?.markCommitted(commitOffset);
        counts.forgetThrough(group, topic, commitOffset);
      }
    });
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.state !== 'open') return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.state !== 'open') return;
    this.attempt('read the log', this.options.topics.join(','), () => this.fill());
    while (this.unsettled < this.options.prefetch && this.ready.length > 0) {
      const entry = this.ready.shift()!;
      if (entry.cursor.active) this.deliver(entry);
    }
  }

  /** Reads ahead up to `prefetch` rows, sharing the room between topics, once half the buffer is used. */
  private fill(): void {
    const { prefetch } = this.options;
    const cursors = [...this.cursors.values()];
    if (cursors.length === 0 || this.ready.length > prefetch / 2) return;
    const share = Math.max(1, Math.ceil((prefetch - this.ready.length) / cursors.length));
    for (let i = 0; i < cursors.length; i++) {
      const room = prefetch - this.ready.length;
      if (room <= 0) break;
      const cursor = cursors[(this.nextTopic + i) % cursors.length]!;
      for (const row of this.ctx.store.readAfter(cursor.topic, cursor.position, Math.min(room, share))) {
        cursor.markRead(row.offset);
        this.ready.push({ cursor, row });
      }
    }
    this.nextTopic = (this.nextTopic + 1) % cursors.length;
  }

  private deliver(entry: LogEntry): void {
    this.unsettled++;
    const { group } = this.options;
    const redeliveries = this.ctx.counts.next(group, entry.row.topic, entry.row.offset);
    const delivery = new LogDelivery(entry, group, redeliveries, this.settler);
    const run = this.invoke(delivery);
    this.handlers.add(run);
    void run.finally(() => this.handlers.delete(run));
  }

  private invoke(delivery: LogDelivery): Promise<void> {
    const where = { group: delivery.group, topic: delivery.topic, offset: delivery.offset };
    return runHandler(this.handler, delivery, this.ctx.config.logger, where);
  }

  private readonly settler = {
    ack: (entry: LogEntry): Promise<void> => {
      this.unsettled--;
      this.schedulePump();
      // After close, or once the lease is lost, the message stays uncommitted and is redelivered.
      if (!entry.cursor.active || this.state === 'closed') return Promise.resolve();
      entry.cursor.markAcked(entry.row.offset);
      return this.checkpoints.request();
    },
    retry: (entry: LogEntry): void => {
      this.unsettled--;
      if (entry.cursor.active && this.state === 'open') this.ready.push(entry);
      this.schedulePump();
    },
  };

  /** Runs one step against the log; a failure is logged, and the poll loop tries again later. */
  private attempt(what: string, topic: string, step: () => void): void {
    try {
      step();
    } catch (err) {
      this.ctx.config.logger.warn({ group: this.options.group, topic, error: describeError(err) }, `could not ${what}`);
    }
  }
}
