/** RabbitMQ: an exchange and a quorum queue of the scenario's own (lib/broker.ts), purged between runs. */
import { AMQP_URL } from '../config.js';
import { openBroker } from '../broker.js';
import type { BrokerTarget } from './target.js';
import amqp from 'amqplib';

export async function rabbitMqTarget(tag: string): Promise<BrokerTarget> {
  const broker = await openBroker(tag);
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const args = { amqpUrl: AMQP_URL, exchange: broker.exchange };
  return {
    kind: 'rabbitmq',
    title: 'RabbitMQ, quorum queue',
    raw: { contender: 'raw-publisher', label: 'amqplib, confirms, 1,000 in flight' },
    async prepare() {
      await broker.purge();
      return { transport: { broker: 'rabbitmq', ...args }, raw: args };
    },
    async held() {
      return (await ch.checkQueue(broker.queue)).messageCount;
    },
    async close() {
      await conn.close();
      await broker.close();
    },
  };
}
