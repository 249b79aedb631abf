/** The RabbitMQ side of a scenario: an exchange and quorum queue of its own, purged between runs. */
import amqp from 'amqplib';
import { createEnvelope, encodeEnvelope, CONTENT_TYPE } from '../../src/index.js';
import { declareTopology, parkingQueueName } from '../../src/transports/rabbitmq/index.js';
import { AMQP_URL, PAYLOAD, TYPE } from './config.js';

export interface Broker {
  readonly exchange: string;
  readonly queue: string;
  purge(): Promise<void>;
  /** Publishes `n` Surety wire messages (1 KiB payload) and waits until the queue holds them. */
  prefill(n: number): Promise<void>;
  close(): Promise<void>;
}

/** `tag` names the exchange and the queue; the queue is declared as Surety's consumer declares it. */
export async function openBroker(tag: string): Promise<Broker> {
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createConfirmChannel();
  const exchange = tag;
  const queue = `${tag}_q`;
  await ch.assertExchange(exchange, 'topic', { durable: true });
  await declareTopology(ch, { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: '#' }] });
  return {
    exchange,
    queue,
    async purge() {
      await ch.purgeQueue(queue);
    },
    async prefill(n) {
      let inFlight = 0;
      let wake: (() => void) | undefined;
      for (let i = 0; i < n; i++) {
        while (inFlight >= 1_000) await new Promise<void>((r) => (wake = r));
        inFlight++;
        const wire = encodeEnvelope(createEnvelope({ type: TYPE, payload: PAYLOAD }));
        const options = {
          persistent: true,
          mandatory: true,
          messageId: wire.id,
          contentType: CONTENT_TYPE,
          type: TYPE,
          timestamp: Math.floor(Date.now() / 1000),
          headers: wire.headers,
        };
        ch.publish(exchange, TYPE, wire.body, options, (err) => {
          if (err) throw err;
          inFlight--;
          wake?.();
          wake = undefined;
        });
      }
      await ch.waitForConfirms();
      // A quorum queue counts a confirmed message at once, but check: a short queue would end a run early.
      const { messageCount } = await ch.checkQueue(queue);
      if (messageCount !== n) throw new Error(`queue ${queue} holds ${messageCount} messages, expected ${n}`);
    },
    async close() {
      await ch.deleteQueue(queue).catch(() => undefined);
      await ch.deleteQueue(parkingQueueName(queue)).catch(() => undefined);
      await ch.deleteExchange(exchange).catch(() => undefined);
      await conn.close();
    },
  };
}
