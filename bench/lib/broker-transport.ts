/**
 * What a relay contender needs to reach one broker, and Surety's transport for it as the docs set
 * each up: connection, names of the scenario's own, otherwise default options.
 */
import type { Publisher } from '../../src/index.js';
import { createKafkaTransport } from '../../src/transports/kafka/index.js';
import { createNatsTransport } from '../../src/transports/nats/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { createRedisStreamsTransport } from '../../src/transports/redis/index.js';

export type BrokerArgs =
  | { readonly broker: 'rabbitmq'; readonly amqpUrl: string; readonly exchange: string }
  | { readonly broker: 'kafka'; readonly brokers: readonly string[]; readonly topic: string }
  | { readonly broker: 'nats'; readonly natsUrl: string; readonly subjectPrefix: string; readonly stream: string }
  | { readonly broker: 'redis'; readonly redisUrl: string; readonly prefix: string };

export async function openTransport(args: BrokerArgs): Promise<Publisher> {
  switch (args.broker) {
    case 'rabbitmq':
      return createRabbitMqTransport({ url: args.amqpUrl, exchange: args.exchange });
    case 'kafka':
      // Every message type goes to the run's topic; the topology creates it if the parent has not.
      return createKafkaTransport({
        brokers: [...args.brokers],
        topicName: () => args.topic,
        topology: { topics: [{ name: args.topic }] },
      });
    case 'nats':
      return createNatsTransport({
        url: args.natsUrl,
        subjectPrefix: args.subjectPrefix,
        topology: { streams: [{ name: args.stream, subjects: [`${args.subjectPrefix}.>`] }] },
      });
    case 'redis':
      return createRedisStreamsTransport({ url: args.redisUrl, prefix: args.prefix });
  }
}
