import { createHash } from 'node:crypto';
import { Registry } from 'prom-client';
import { describeError } from '../core/errors.js';
import { wireOrderingKey } from '../core/wire.js';
import type { Delivery, Subscription } from '../ports/transport.js';
import { BatchProcessor, type Outcome, type WorkItem } from './batch-processor.js';
import { resolveConsumerOptions, type ConsumerOptions, type ResolvedConsumerOptions } from './consumer-options.js';
import { Lane, type Pending } from './lane.js';
import { HandlerRegistry, type BatchHandler, type Handler, type Upcaster } from './handler-registry.js';
import { ConsumerMetrics } from './consumer-metrics.js';
import { ConsumerRetention } from './consumer-retention.js';

/**
 * Exactly-once effects on top of at-least-once delivery. For each delivery: one transaction in the
 * consumer's database records (message id, group) in the inbox and runs the handler; only after it
 * commits is the message acked (or checkpointed). Duplicates skip the handler. Failures go to the
 * dead-letter table in that same transaction, then the message is acked, so one retry engine (the
 * replay job) drives recovery with backoff. If the database itself is down nothing is acked and
 * consumption pauses with backoff.
 * @example
 * const consumer = new Consumer({ group: 'billing', store, transport })
 *   .on('order.created', async (order, { tx }) => {
 *     await tx.query('INSERT INTO invoices (order_id) VALUES ($1)', [order.id]);
 *   });
 * await consumer.start();
 */
export class Consumer {
  readonly options: ResolvedConsumerOptions;
  readonly registry = new HandlerRegistry();
  readonly processor: BatchProcessor;
  /** The prom-client registry of its metrics (`registry` names the handlers): the one given, or a private one. */
  readonly metricsRegistry: Registry;
  /** @internal Counted by the consumer and its replay job. */
  readonly metrics: ConsumerMetrics;
  private subscription: Subscription | undefined;
  private readonly lanes: Lane[];
  private nextLane = 0;
  private retention: ConsumerRetention | undefined;

  constructor(options: ConsumerOptions) {
    this.options = resolveConsumerOptions(options);
    this.metricsRegistry = options.registry ?? new Registry();
    this.metrics = new ConsumerMetrics(this.metricsRegistry, this.options.group);
    this.processor = new BatchProcessor(this.options, this.registry);
    const process = async (batch: readonly Pending[]) => {
      const done = this.metrics.batch();
      try {
        return await this.processor.process(batch.map((p) => toWorkItem(p.delivery)));
      } finally {
        done();
      }
    };
    const settle = (p: Pending, outcome: Outcome) => this.settle(p, outcome);
    this.lanes = Array.from({ length: this.options.parallelism }, () => new Lane(this.options, process, settle));
  }

  get group(): string {
    return this.options.group;
  }

  /** Registers the handler of a message type, written for payload `version` (default 1). */
  on<P>(type: string, handler: Handler<P>, options?: { version?: number }): this {
    this.registry.on(type, handler, options);
    return this;
  }

  /**
   * Registers a batch handler of a message type: consecutive deliveries of that type in a batch
   * come in one call, so their effects can be written with one statement.
   * @example
   * consumer.onBatch('order.created', async (messages, { tx }) => {
   *   await tx.query('INSERT INTO invoices (order_id) SELECT * FROM unnest($1::uuid[])', [
   *     messages.map((m) => m.payload.id),
   *   ]);
   * });
   */
  onBatch<P>(type: string, handler: BatchHandler<P>, options?: { version?: number }): this {
    this.registry.onBatch(type, handler, options);
    return this;
  }

  /** Registers how a payload of `type` at version `from` becomes version `from + 1`. */
  upcast(type: string, from: number, upcaster: Upcaster): this {
    this.registry.upcast(type, from, upcaster);
    return this;
  }

  async start(): Promise<void> {
    if (this.subscription) return;
    const o = this.options;
    const topics = o.topics ?? this.registry.types;
    if (topics.length === 0) throw new TypeError('consumer.start(): register a handler (or give topics) first');
    for (const lane of this.lanes) lane.stopping = false;
    this.subscription = await o.transport.subscribe({ group: o.group, topics, prefetch: o.prefetch }, (delivery) =>
      this.enqueue(delivery),
    );
    if (o.retention) {
      this.retention = new ConsumerRetention(o.store, o.clock, o.retention, o.logger);
      this.retention.start();
    }
    o.logger.info({ group: o.group, topics, retry: o.retry.kind }, 'consumer started');
  }

  /** Graceful: stops receiving, finishes the batch in hand, acks only what was committed. */
  async stop(): Promise<void> {
    for (const lane of this.lanes) lane.stopping = true;
    await this.retention?.stop();
    this.retention = undefined;
    await this.subscription?.close();
    this.subscription = undefined;
    await Promise.all(this.lanes.map((lane) => lane.idle()));
  }

  private enqueue(delivery: Delivery): Promise<void> {
    return new Promise<void>((settled) => this.laneFor(delivery).push({ delivery, settled }));
  }

  /** Same ordering key, same lane (per-key serial); otherwise round robin. */
  private laneFor(delivery: Delivery): Lane {
    if (this.lanes.length === 1) return this.lanes[0]!;
    if (this.options.perKeySerial) {
      const key = wireOrderingKey(delivery.message.headers) ?? delivery.message.id;
      return this.lanes[createHash('sha1').update(key).digest().readUInt32BE(0) % this.lanes.length]!;
    }
    return this.lanes[this.nextLane++ % this.lanes.length]!;
  }

  private async settle(p: Pending, outcome: Outcome): Promise<void> {
    const { logger, group } = this.options;
    this.metrics.delivered(outcome);
    try {
      if (outcome.kind === 'failed') {
        logger.warn(
          { group, messageId: p.delivery.message.id, reason: outcome.error },
          'handler failed; the broker will redeliver',
        );
        await p.delivery.retry();
      } else {
        if (outcome.kind === 'recorded') {
          const log = outcome.failure.status === 'dead' ? logger.error.bind(logger) : logger.warn.bind(logger);
          if (outcome.failure.status === 'dead')
            this.notifyDead(p.delivery.message.id, outcome.failure.attempts, outcome.error);
          log(
            {
              group,
              messageId: p.delivery.message.id,
              attempts: outcome.failure.attempts,
              nextRetryAt: outcome.failure.nextRetryAt,
              reason: outcome.error,
            },
            outcome.failure.status === 'dead'
              ? 'message is dead; an operator must act'
              : 'handler failed; dead letter scheduled for replay',
          );
        }
        await p.delivery.ack();
      }
    } catch (err) {
      // The commit stands; a lost ack only means a redelivery, which the inbox absorbs.
      logger.warn({ err: describeError(err), messageId: p.delivery.message.id }, 'ack failed after commit');
    } finally {
      p.settled();
    }
  }

  /** @internal Fires the onDead hook, which must never break consumption. */
  notifyDead(messageId: string, attempts: number, error: string): void {
    try {
      this.options.onDead?.({ messageId, group: this.options.group, attempts, error });
    } catch (err) {
      this.options.logger.error({ err: describeError(err) }, 'onDead hook threw');
    }
  }
}

function toWorkItem(delivery: Delivery): WorkItem {
  const { message, topic, exhausted } = delivery;
  return exhausted ? { message, topic, replay: false, exhausted } : { message, topic, replay: false };
}
