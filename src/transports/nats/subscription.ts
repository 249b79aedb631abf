import { SuretyError, describeError } from '../../core/errors.js';
import type { Delivery, Subscription } from '../../ports/transport.js';
import { waitForHandlers } from '../running-handlers.js';
import type { NatsConnectionManager, NatsSession } from './connection.js';
import { JetStreamDelivery } from './delivery.js';
import type { JsMsg } from './driver.js';
import { followExhaustedAdvisories } from './exhausted-advisory.js';
import type { ResolvedNatsOptions } from './options.js';
import { ensureGroupConsumer, isNotFound } from './topology.js';
import { runHandler } from '../run-handler.js';

/** One stream a subscription reads, through the group's durable consumer on it. */
export interface ConsumedStream {
  readonly stream: string;
  readonly durable: string;
  /** Subject to topic, for the subjects this subscription filters on. */
  readonly topics: ReadonlyMap<string, string>;
}

interface Messages extends AsyncIterable<JsMsg> {
  stop(): void;
}

/**
 * Pulls from a group's durable consumers with explicit ack, `max_ack_pending` = prefetch. The pull
 * loop of each stream is restarted when it ends (a consumer deleted, an error), once the connection
 * is back; the client itself re-pulls after a reconnect. Closing hands unsettled messages back at
 * once, as a RabbitMQ channel close does, instead of leaving them until `ack_wait`.
 */
export class JetStreamSubscription implements Subscription {
  private readonly running = new Set<Promise<void>>();
  private readonly unsettled = new Set<JetStreamDelivery>();
  private readonly pulls = new Set<Messages>();
  private readonly loops: Promise<void>[] = [];
  private readonly advisories: { unsubscribe(): void }[] = [];
  private closing: Promise<void> | undefined;

  constructor(
    private readonly manager: NatsConnectionManager,
    private readonly options: ResolvedNatsOptions,
    private readonly group: string,
    private readonly subjects: ReadonlyMap<string, string>,
    private readonly prefetch: number,
    private readonly handler: (delivery: Delivery) => Promise<void>,
    private readonly onClosed: () => void,
  ) {}

  /** Finds each subject's stream, ensures the group's durable consumers, then starts pulling. */
  async start(): Promise<void> {
    const { startTimeoutMs } = this.options;
    if (!(await this.manager.waitUntilReady(startTimeoutMs)))
      throw this.manager.notReady(`could not subscribe group ${this.group}`, startTimeoutMs);
    const session = this.manager.current!;
    const streams = await this.plan(session);
    for (const s of streams) {
      await ensureGroupConsumer(session.jsm, {
        stream: s.stream,
        durable: s.durable,
        filterSubjects: [...s.topics.keys()],
        ackWaitMs: this.options.ackWaitMs,
        maxDeliver: this.options.maxDeliver,
        maxAckPending: this.prefetch,
      });
    }
    for (const s of streams) {
      const topicOf = (subject: string): string => s.topics.get(subject) ?? subject;
      this.advisories.push(
        followExhaustedAdvisories(session, { ...s, topicOf }, (d) => this.run(d), this.options.logger),
      );
      this.loops.push(this.pullLoop(s));
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown().finally(this.onClosed);
    return this.closing;
  }

  private async plan(session: NatsSession): Promise<ConsumedStream[]> {
    const byStream = new Map<string, Map<string, string>>();
    for (const [subject, topic] of this.subjects) {
      const stream = await session.jsm.streams.find(subject).catch((err: unknown) => {
        throw new SuretyError(
          'SURETY_INVALID_OPTION',
          `no JetStream stream stores subject "${subject}" (topic ${topic}): declare one in "topology.streams"`,
          { cause: err },
        );
      });
      const topics = byStream.get(stream) ?? new Map<string, string>();
      topics.set(subject, topic);
      byStream.set(stream, topics);
    }
    const durable = this.options.consumerForGroup(this.group);
    return [...byStream].map(([stream, topics]) => ({ stream, durable, topics }));
  }

  private async pullLoop(s: ConsumedStream): Promise<void> {
    while (!this.closing) {
      try {
        const session = this.manager.current;
        if (!session) {
          await this.manager.waitUntilReady(this.options.reconnectWaitMs * 4);
          continue;
        }
        const consumer = await session.js.consumers.get(s.stream, s.durable);
        const messages = (await consumer.consume({ max_messages: this.prefetch })) as unknown as Messages;
        this.pulls.add(messages);
        if (this.closing) messages.stop();
        try {
          for await (const msg of messages) this.receive(s, msg);
        } finally {
          this.pulls.delete(messages);
        }
      } catch (err) {
        if (this.closing) return;
        const level = isNotFound(err) ? 'error' : 'warn';
        this.options.logger[level](
          { err: describeError(err), stream: s.stream, consumer: s.durable },
          'nats pull ended; restarting',
        );
      }
      if (!this.closing) await new Promise((resolve) => setTimeout(resolve, this.options.reconnectWaitMs));
    }
  }

  private receive(s: ConsumedStream, msg: JsMsg): void {
    const topic = s.topics.get(msg.subject) ?? msg.subject;
    const delivery = new JetStreamDelivery(msg, topic, this.options, (d) => this.unsettled.delete(d));
    if (this.closing) return delivery.release();
    this.unsettled.add(delivery);
    void this.run(delivery);
  }

  private run(delivery: Delivery): Promise<void> {
    const done = runHandler(this.handler, delivery, this.options.logger, { topic: delivery.topic });
    if (delivery instanceof JetStreamDelivery) delivery.keepAliveWhile(done);
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
    return done;
  }

  private async shutDown(): Promise<void> {
    for (const a of this.advisories) a.unsubscribe();
    for (const pull of this.pulls) pull.stop();
    await Promise.allSettled(this.loops);
    // The unsubscribe reaches the server before the naks below: nothing goes back to a dead pull.
    await this.manager.current?.nc.flush().catch(() => {});
    await waitForHandlers(this.running, this.options.closeTimeoutMs);
    for (const d of [...this.unsettled]) d.release();
    await this.manager.current?.nc.flush().catch(() => {});
  }
}
