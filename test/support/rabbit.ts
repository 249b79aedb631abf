import amqp from 'amqplib';
import { testEnv, uniqueName } from './env.js';

/**
 * Independent view of RabbitMQ for assertions: declares an isolated exchange and queues with raw
 * amqplib and drains what arrived, so tests never verify the transport with itself.
 */
export class RabbitProbe {
  private conn!: amqp.ChannelModel;
  private ch!: amqp.Channel;
  private readonly queues: string[] = [];

  private constructor(readonly exchange: string) {}

  static async open(label: string): Promise<RabbitProbe> {
    const probe = new RabbitProbe(uniqueName(label));
    await probe.reopen();
    await probe.ch.assertExchange(probe.exchange, 'topic', { durable: true });
    return probe;
  }

  /** Connects again, e.g. after the broker was restarted (durable exchanges and queues survive). */
  async reopen(): Promise<void> {
    this.conn = await amqp.connect(testEnv.amqpUrl);
    this.conn.on('error', () => undefined);
    this.ch = await this.conn.createChannel();
    this.ch.on('error', () => undefined);
  }

  /** A queue bound to `pattern`; quorum by default as in production. */
  async bindQueue(pattern: string, args: Record<string, unknown> = { 'x-queue-type': 'quorum' }): Promise<string> {
    const queue = uniqueName(`q_${pattern}`);
    await this.ch.assertQueue(queue, { durable: true, arguments: args });
    await this.ch.bindQueue(queue, this.exchange, pattern);
    this.queues.push(queue);
    return queue;
  }

  /** Adds a binding to an existing queue. */
  async bind(queue: string, pattern: string): Promise<void> {
    await this.ch.bindQueue(queue, this.exchange, pattern);
  }

  async purge(queue: string): Promise<void> {
    await this.ch.purgeQueue(queue);
  }

  async count(queue: string): Promise<number> {
    return (await this.ch.checkQueue(queue)).messageCount;
  }

  /** Reads every message currently in `queue` (acking them) and returns their message ids in order. */
  async drain(queue: string): Promise<string[]> {
    const ids: string[] = [];
    for (;;) {
      const msg = await this.ch.get(queue, { noAck: true });
      if (msg === false) return ids;
      ids.push(String(msg.properties.messageId));
    }
  }

  /**
   * Takes every message in `queue` now, through a consumer (far faster than `drain` on a quorum
   * queue, whose basic.get costs a round trip of its own), and returns their message ids.
   */
  async takeAll(queue: string, timeoutMs = 60_000): Promise<string[]> {
    const { messageCount } = await this.ch.checkQueue(queue);
    if (messageCount === 0) return [];
    const ids: string[] = [];
    let consumerTag = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`took ${ids.length} of ${messageCount} messages within ${timeoutMs} ms`)),
        timeoutMs,
      );
      void this.ch
        .consume(
          queue,
          (msg) => {
            if (!msg) return;
            ids.push(String(msg.properties.messageId));
            if (ids.length === messageCount) {
              clearTimeout(timer);
              resolve();
            }
          },
          { noAck: true },
        )
        .then((ok) => (consumerTag = ok.consumerTag), reject);
    });
    await this.ch.cancel(consumerTag);
    return ids;
  }

  /** Drains until `expected` distinct ids have arrived or the deadline passes. */
  async collect(queue: string, expected: number, timeoutMs = 60_000): Promise<string[]> {
    const all: string[] = [];
    const deadline = Date.now() + timeoutMs;
    while (new Set(all).size < expected && Date.now() < deadline) {
      const batch = await this.drain(queue);
      all.push(...batch);
      if (batch.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    return all;
  }

  async close(): Promise<void> {
    for (const q of this.queues) await this.ch.deleteQueue(q).catch(() => undefined);
    await this.ch.deleteExchange(this.exchange).catch(() => undefined);
    await this.conn.close().catch(() => undefined);
  }
}
