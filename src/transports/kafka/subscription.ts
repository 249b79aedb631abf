import { describeError } from '../../core/errors.js';
import type { Delivery, Subscription } from '../../ports/transport.js';
import { KafkaDelivery, type PartitionEntry } from './delivery.js';
import type { KafkaAssignment, KafkaConsumer, KafkaMessagesStream, KafkaRecordIn } from './driver.js';
import type { ResolvedKafkaOptions } from './options.js';
import { PartitionCursor } from './partition-cursor.js';
import { fromRecord } from './wire-mapping.js';
import { runHandler } from '../run-handler.js';
import { TurnFlush } from '../turn-flush.js';

/** What one subscription consumes: Kafka topic names and the transport's topic each stands for. */
export interface ConsumedTopics {
  readonly group: string;
  /** Kafka topic name -> the topic as the application names it. */
  readonly byKafkaName: ReadonlyMap<string, string>;
  readonly prefetch: number;
}

/**
 * One member of a consumer group. Offsets are committed by hand, per partition, only up to the
 * lowest record not yet settled (PartitionCursor), never automatically. A retried record goes to
 * the back of this member's queue, so its partition keeps flowing. On a rebalance the member commits
 * what is settled at once; partitions it lost stop handing out records, and their in-flight
 * deliveries settle nothing (the new owner gets them again, and the consumer's inbox drops the
 * duplicate effect).
 */
export class KafkaSubscription implements Subscription {
  private readonly cursors = new Map<string, PartitionCursor>();
  private readonly deliveries = new Map<string, number>();
  private ready: PartitionEntry[] = [];
  private unsettled = 0;
  private readonly handlers = new Set<Promise<void>>();
  private state: 'open' | 'closing' | 'closed' = 'open';
  private stream: KafkaMessagesStream | undefined;
  private paused = false;
  private pumpScheduled = false;
  /** Acks arriving in one event-loop turn share one OffsetCommit request. */
  private readonly commits = new TurnFlush(() => this.commitSettled());
  private committing: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;
  private consumer: KafkaConsumer;

  constructor(
    private readonly makeConsumer: () => KafkaConsumer,
    private readonly options: ResolvedKafkaOptions,
    private readonly topics: ConsumedTopics,
    private readonly handler: (delivery: Delivery) => Promise<void>,
    private readonly onClosed: () => void,
  ) {
    this.consumer = makeConsumer();
  }

  /**
   * Joins the group and starts fetching; resolves once this member has its first assignment. A
   * failed join (the group's coordinator moving after a broker loss) is tried again with a fresh
   * client until `startTimeoutMs` has passed.
   */
  async start(): Promise<void> {
    const deadline = Date.now() + this.options.startTimeoutMs;
    for (;;) {
      try {
        return await this.join();
      } catch (err) {
        if (this.state !== 'open' || Date.now() >= deadline) throw err;
        this.options.logger.warn(
          { group: this.topics.group, error: describeError(err) },
          'joining the group failed; retrying',
        );
        this.consumer.removeListener('consumer:group:rebalance', this.onRebalance);
        this.consumer.removeListener('consumer:group:join', this.onJoin);
        await this.consumer.close(true).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 500));
        this.consumer = this.makeConsumer();
      }
    }
  }

  private async join(): Promise<void> {
    this.consumer.on('consumer:group:rebalance', this.onRebalance);
    this.consumer.on('consumer:group:join', this.onJoin);
    this.stream = await this.consumer.consume({
      topics: [...this.topics.byKafkaName.keys()],
      mode: 'committed',
      fallbackMode: 'earliest',
      autocommit: false,
      maxWaitTime: 500,
    });
    this.stream.on('data', this.onRecord);
    this.stream.on('error', (err: unknown) =>
      this.options.logger.warn({ group: this.topics.group, error: describeError(err) }, 'Kafka fetch failed'),
    );
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.state = 'closing';
    this.stream?.pause();
    this.ready = [];
    await waitBounded([...this.handlers], this.options.closeTimeoutMs);
    await this.commitSettled();
    this.state = 'closed';
    for (const cursor of this.cursors.values()) cursor.retire();
    this.commits.releaseAll();
    this.consumer.removeListener('consumer:group:rebalance', this.onRebalance);
    this.consumer.removeListener('consumer:group:join', this.onJoin);
    try {
      await this.stream?.close();
      await this.consumer.close(true); // leaves the group: its partitions move on at once
    } catch (err) {
      this.options.logger.warn({ group: this.topics.group, error: describeError(err) }, 'closing the consumer failed');
    }
    this.onClosed();
  }

  /** The group is rebalancing: commit what is settled while this generation may still commit. */
  private readonly onRebalance = (): void => {
    void this.commitSettled();
  };

  /** A new generation: partitions no longer assigned are revoked here. */
  private readonly onJoin = (event: { assignments?: KafkaAssignment[] }): void => {
    const assigned = new Set((event.assignments ?? []).flatMap((a) => a.partitions.map((p) => key(a.topic, p))));
    for (const [k, cursor] of this.cursors) {
      if (assigned.has(k)) continue;
      cursor.retire();
      this.cursors.delete(k);
      if (cursor.unsettled > 0)
        this.options.logger.info(
          { group: this.topics.group, topic: cursor.topic, partition: cursor.partition, inFlight: cursor.unsettled },
          'partition revoked; its unsettled records go to the new owner',
        );
    }
    this.ready = this.ready.filter((entry) => entry.cursor.active);
  };

  private isAssigned(topic: string, partition: number): boolean {
    return (this.consumer.assignments ?? []).some((a) => a.topic === topic && a.partitions.includes(partition));
  }

  private readonly onRecord = (record: KafkaRecordIn): void => {
    if (this.state !== 'open' || !this.isAssigned(record.topic, record.partition)) return;
    const k = key(record.topic, record.partition);
    let cursor = this.cursors.get(k);
    if (!cursor) {
      cursor = new PartitionCursor(record.topic, record.partition);
      this.cursors.set(k, cursor);
    }
    if (cursor.hasRead(record.offset)) return; // refetched after a rejoin: already handed out or queued
    cursor.markRead(record.offset);
    const topic = this.topics.byKafkaName.get(record.topic) ?? record.topic;
    this.ready.push({ cursor, offset: record.offset, topic, message: fromRecord(record) });
    if (this.ready.length >= this.topics.prefetch && !this.paused) {
      this.paused = true;
      this.stream?.pause();
    }
    this.schedulePump();
  };

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
    while (this.unsettled < this.topics.prefetch && this.ready.length > 0) {
      const entry = this.ready.shift()!;
      if (entry.cursor.active) this.deliver(entry);
    }
    if (this.paused && this.ready.length < this.topics.prefetch / 2) {
      this.paused = false;
      this.stream?.resume();
    }
  }

  private deliver(entry: PartitionEntry): void {
    this.unsettled++;
    const id = entryKey(entry);
    const before = this.deliveries.get(id) ?? 0;
    this.deliveries.set(id, before + 1);
    const delivery = new KafkaDelivery(entry, before, this.settler);
    const run = this.invoke(delivery);
    this.handlers.add(run);
    void run.finally(() => this.handlers.delete(run));
  }

  private invoke(delivery: KafkaDelivery): Promise<void> {
    const { topic, partition, offset } = delivery;
    const where = { group: this.topics.group, topic, partition, offset: String(offset) };
    return runHandler(this.handler, delivery, this.options.logger, where);
  }

  private readonly settler = {
    ack: (entry: PartitionEntry): Promise<void> => {
      this.unsettled--;
      this.deliveries.delete(entryKey(entry));
      this.schedulePump();
      // Revoked or closed: the offset stays uncommitted and the partition's owner redelivers it.
      if (!entry.cursor.active || this.state === 'closed') return Promise.resolve();
      entry.cursor.markAcked(entry.offset);
      return this.commits.request();
    },
    retry: (entry: PartitionEntry): void => {
      this.unsettled--;
      if (entry.cursor.active && this.state === 'open') this.ready.push(entry);
      this.schedulePump();
    },
  };

  /** Commits, per partition, every offset that can advance; one commit request at a time. */
  private commitSettled(): Promise<void> {
    this.committing = this.committing.then(async () => {
      const offsets = [...this.cursors.values()].flatMap((cursor) => {
        const offset = cursor.active ? cursor.commitCandidate() : undefined;
        return offset === undefined ? [] : [{ cursor, offset }];
      });
      if (offsets.length === 0) return;
      try {
        await this.consumer.commit({
          offsets: offsets.map(({ cursor, offset }) => ({
            topic: cursor.topic,
            partition: cursor.partition,
            offset,
            leaderEpoch: -1,
          })),
        });
        for (const { cursor, offset } of offsets) cursor.markCommitted(offset);
      } catch (err) {
        // Fenced by a rebalance or a lost connection: the records are redelivered, never skipped.
        this.options.logger.warn({ group: this.topics.group, error: describeError(err) }, 'offset commit failed');
      }
    });
    return this.committing;
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function entryKey(entry: PartitionEntry): string {
  return `${key(entry.cursor.topic, entry.cursor.partition)}\u0000${entry.offset}`;
}

async function waitBounded(work: Promise<unknown>[], timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(work),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
}
